import { api } from './api';
import { me } from './state';

/** What one message sent over the socket hears back, keyed by the frame's `replyTo`. */
export interface ChatReplyHandlers {
  delta(text: string): void;
  done(content: string): void;
  error(body: { error?: string; code?: string }): void;
  /** The socket closed before the answer ended. */
  cut(): void;
}

const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 15_000;
/** An open websocket keeps the agent awake: a console left open must not hold it up forever. */
const IDLE_CLOSE_MS = 10 * 60_000;

/**
 * The agent's own websocket through the edge (`websocketUrl`), as the runtime speaks it: the token in
 * the `agent-runtime, bearer.<token>` subprotocol pair (never `?token=`, which would land in logs and
 * history), `ready` on connect, then `delta`… `done` | `error` per streamed message. It reconnects with
 * backoff when it closes (an edge restart's 1012 included), and closes (and stops retrying) after a quiet spell until
 * `wake()`. `send` answers false while no socket is ready, so the caller can use `POST /api/chat`,
 * which also wakes an instance stopped for idleness.
 */
export function agentSocket(websocketUrl: string, onReady: (ready: boolean) => void) {
  let ws: WebSocket | undefined;
  let ready = false;
  let closed = false;
  let resting = false;
  let failures = 0;
  let token: string | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let idle: ReturnType<typeof setTimeout> | undefined;
  let sequence = 0;
  const pending = new Map<string, ChatReplyHandlers>();

  const setReady = (value: boolean) => {
    ready = value;
    onReady(value);
  };
  const rest = () => {
    resting = true;
    ws?.close(1000, 'idle');
  };
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(rest, IDLE_CLOSE_MS);
  };
  const schedule = () => {
    if (closed || resting) return;
    const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** failures) * (0.5 + Math.random() / 2);
    retry = setTimeout(() => void connect(), delay);
  };

  async function connect() {
    if (closed || resting || ws) return;
    const userId = me.value?.id;
    if (!token && userId) token = (await api.GET('/api/instance/{userId}/token', { params: { path: { userId } } })).data?.token;
    if (closed || resting || ws) return;
    if (!token) {
      failures++;
      return schedule();
    }
    let socket: WebSocket;
    try {
      socket = new WebSocket(websocketUrl, ['agent-runtime', `bearer.${token}`]);
    } catch {
      failures++;
      return schedule();
    }
    ws = socket;
    socket.onmessage = (event) => {
      let frame: { type?: string; replyTo?: string; text?: string; message?: { content?: string }; error?: string; code?: string };
      try {
        frame = JSON.parse(String(event.data));
      } catch {
        return;
      }
      if (frame.type === 'ready') {
        failures = 0;
        return setReady(true);
      }
      const handlers = frame.replyTo ? pending.get(frame.replyTo) : undefined;
      if (!handlers) return;
      if (frame.type === 'delta') handlers.delta(frame.text ?? '');
      else if (frame.type === 'done' || frame.type === 'error') {
        pending.delete(frame.replyTo!);
        touch();
        if (frame.type === 'done') handlers.done(frame.message?.content ?? '');
        else handlers.error({ error: frame.error, code: frame.code });
      }
    };
    socket.onclose = () => {
      // Refused right after working: the token may have been rotated, so ask for it again (once, not on every retry).
      if (!ready) {
        if (failures === 0) token = undefined;
        failures++;
      }
      ws = undefined;
      setReady(false);
      for (const handlers of pending.values()) handlers.cut();
      pending.clear();
      schedule();
    };
  }

  touch();
  void connect();
  return {
    /** Sends one message for a streamed answer; false when no socket is ready (nothing was sent). */
    send(content: string, handlers: ChatReplyHandlers): boolean {
      if (!ready || !ws) {
        this.wake();
        return false;
      }
      const id = `console-${++sequence}`;
      pending.set(id, handlers);
      ws.send(JSON.stringify({ type: 'message', content, id, stream: true }));
      touch();
      return true;
    },
    /** After a quiet spell: open again (someone is about to chat). */
    wake() {
      if (!resting) return;
      resting = false;
      failures = 0;
      touch();
      void connect();
    },
    close() {
      closed = true;
      clearTimeout(retry);
      clearTimeout(idle);
      ws?.close(1000, 'page left');
    },
  };
}
