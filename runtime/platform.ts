import { serverSentEvents } from '#contract/sse';

/**
 * The runtime's only way to the platform: HTTP with its own gateway token to the internal runtime
 * routes (`/api/instance/{userId}/runtime/...`). It holds no platform secret and no provider key:
 * the model layer is behind the platform's chat completions route.
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface AgentState {
  id: string;
  name: string;
  model: string;
  config: { systemPrompt?: string; temperature?: number; maxTokens?: number; model?: string; [k: string]: unknown };
  memory: Record<string, unknown>;
  messages: (ChatMessage & { createdAt?: string })[];
  /** Installed skills; older platforms do not send them. */
  skills?: { skillId: string; enabled: boolean; config: Record<string, unknown> }[];
  /** The agent's credentials (name → value), set by its owner; older platforms do not send them. */
  credentials?: Record<string, string>;
}

export interface PlatformState {
  userId: string;
  runtimeVersion: string;
  agents: AgentState[];
}

/** The platform refused or failed; `code` and `message` come from its `{error, code}` body. */
export class PlatformError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
  }
}

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** One event of a streamed completion (see `completeStream`). */
export type CompletionEvent =
  | { event: 'delta'; data: { content: string } }
  | { event: 'done'; data: { id?: string; model?: string; finish_reason?: string | null; usage?: TokenUsage } }
  | { event: 'error'; data: { error: string; code: string } };

export interface PlatformOptions {
  baseUrl: string;
  userId: string;
  token: string;
  timeoutMs?: number;
}

export function platformClient(opts: PlatformOptions) {
  const base = `${opts.baseUrl.replace(/\/+$/, '')}/api/instance/${encodeURIComponent(opts.userId)}/runtime`;

  async function request<T>(path: string, init: { method?: string; body?: unknown; timeoutMs?: number } = {}): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method: init.method ?? 'GET',
        headers: { authorization: `Bearer ${opts.token}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(init.timeoutMs ?? opts.timeoutMs ?? 10_000),
      });
    } catch (err) {
      throw new PlatformError(`the platform is unreachable (${(err as Error).name})`, 0, 'PLATFORM_UNREACHABLE');
    }
    const text = await res.text();
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (!res.ok)
      throw new PlatformError(typeof body?.error === 'string' ? body.error : `platform answered ${res.status}`, res.status, body?.code ?? 'PLATFORM_ERROR');
    return body as T;
  }

  return {
    /** After a rotation the platform accepts only the new token (see POST /token in routes.ts). */
    useToken: (token: string) => {
      opts.token = token;
    },
    state: (agentId?: string) => request<PlatformState>(`/state${agentId ? `?agentId=${encodeURIComponent(agentId)}` : ''}`),
    complete: (agentId: string, messages: ChatMessage[]) =>
      request<{
        model: string;
        choices: { message: { content: string | null } }[];
        usage?: TokenUsage;
      }>('/chat/completions', {
        method: 'POST',
        body: { agentId, messages },
        timeoutMs: 120_000,
      }),
    /**
     * The same completion, streamed: the platform answers server-sent events, yielded as they come
     * (`delta` pieces, then `done` with the usage, or `error` when the model fails mid-stream).
     * A refusal before the stream starts (402, 503...) throws a PlatformError, as `complete` does.
     */
    async *completeStream(agentId: string, messages: ChatMessage[]): AsyncGenerator<CompletionEvent> {
      let res: Response;
      try {
        res = await fetch(`${base}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${opts.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify({ agentId, messages, stream: true }),
          signal: AbortSignal.timeout(120_000),
        });
      } catch (err) {
        throw new PlatformError(`the platform is unreachable (${(err as Error).name})`, 0, 'PLATFORM_UNREACHABLE');
      }
      if (!res.ok || !res.body || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
        const body = (await res.json().catch(() => undefined)) as { error?: unknown; code?: unknown } | undefined;
        throw new PlatformError(
          typeof body?.error === 'string' ? body.error : `platform answered ${res.status}`,
          res.status,
          typeof body?.code === 'string' ? body.code : 'PLATFORM_ERROR',
        );
      }
      try {
        for await (const e of serverSentEvents(res.body)) {
          if (e.event === 'delta' || e.event === 'done' || e.event === 'error') yield e as CompletionEvent;
        }
      } catch (err) {
        throw new PlatformError(`the completion stream broke (${(err as Error).name})`, 502, 'STREAM_BROKEN');
      }
    },
    /** Calls a skill installed on the agent; the answer is the skill's `{success: true, ...data}`. */
    skill: (agentId: string, skill: string, body: Record<string, unknown>) =>
      request<{ success: true } & Record<string, unknown>>(`/agents/${encodeURIComponent(agentId)}/skills/${encodeURIComponent(skill)}`, {
        method: 'POST',
        body,
      }),
    report: (agentId: string, messages: ChatMessage[], extra: { responseMs?: number; failed?: boolean }) =>
      request<{ success: true }>('/messages', { method: 'POST', body: { agentId, messages, ...extra } }),
  };
}

export type PlatformClient = ReturnType<typeof platformClient>;
