/**
 * The runtime's own log lines (startup, chats handled, failures): JSON on stderr (runtime/server.ts),
 * which the platform keeps as the per-agent log (the local launcher captures it, awslogs in AWS).
 * `agentId` makes a line that agent's; never message content, memory or credentials.
 */
export type LogFields = Record<string, unknown> & { level?: 'INFO' | 'WARN' | 'ERROR'; agentId?: string };

export type Log = (message: string, extra?: LogFields) => void;
