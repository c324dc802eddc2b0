import { useComputed, useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { api, describeError, readEventStream, type Schemas } from '../api';
import { agentSocket } from '../agent-socket';
import { followInstance } from '../live';
import { Link } from '../router';
import { me } from '../state';
import { ActionButton, CopyButton, Field, formatDate, NotFound, Notice, PageTitle, TextArea } from '../ui';
import { StatusBadge } from './dashboard';

const MEMORY_VALUE_MAX_BYTES = 100 * 1024;
const MEMORY_BULK_MAX_KEYS = 50;
const LOG_FOLLOW_SECONDS = 300;
const LOG_MAX_LINES = 200;

type Agent = NonNullable<Awaited<ReturnType<typeof loadAgent>>>;
type LifecycleOp = 'start' | 'stop' | 'restart' | 'update' | 'repair' | 'reset-memory';

async function loadAgent(id: string) {
  const { data } = await api.GET('/api/agents/{id}', { params: { path: { id } } });
  return data?.agent;
}

export function AgentPage({ id }: { id: string }) {
  const agent = useSignal<Agent | null | undefined>(undefined);
  const refresh = async () => {
    agent.value = (await loadAgent(id)) ?? null;
  };
  useEffect(() => void refresh(), [id]);
  if (agent.value === undefined) return <p role="status">Loading…</p>;
  if (agent.value === null) return <NotFound title="Agent not found" />;
  const a = agent.value;
  return (
    <section>
      <PageTitle>{a.name}</PageTitle>
      <div class="grid">
        <div class="panel">
          <h2>Status</h2>
          <dl class="facts">
            <dt>Status</dt>
            <dd aria-live="polite">
              <StatusBadge status={a.status} />
            </dd>
            {a.failureReason && (
              <>
                <dt>Why</dt>
                <dd>{a.failureReason}</dd>
              </>
            )}
            <dt>URL</dt>
            <dd>
              <code>{a.url}</code>
            </dd>
            <dt>Websocket</dt>
            <dd>
              <code>{a.websocketUrl}</code>
            </dd>
            <dt>Model</dt>
            <dd>{a.model}</dd>
            <dt>Runtime</dt>
            <dd>{a.runtimeVersion}</dd>
            <dt>Started</dt>
            <dd>{formatDate(a.startedAt)}</dd>
          </dl>
          <GatewayToken />
        </div>
        <Lifecycle onSettled={refresh} />
      </div>
      <Chat agentId={a.id} websocketUrl={a.websocketUrl} />
      <LiveLog agentId={a.id} />
      <Memory agentId={a.id} />
      <InstalledSkills agentId={a.id} />
    </section>
  );
}

/** The gateway token, fetched only when asked for and never kept beyond the page. */
function GatewayToken() {
  const token = useSignal<string | undefined>(undefined);
  const failure = useSignal<string | undefined>(undefined);
  return (
    <div>
      <h3>Gateway token</h3>
      {token.value ? (
        <div class="row">
          <code class="secret">{token.value}</code>
          <CopyButton value={token.value} label="Copy token" />
          <button type="button" class="secondary" onClick={() => (token.value = undefined)}>
            Hide
          </button>
        </div>
      ) : (
        <ActionButton
          class="secondary"
          onAction={async () => {
            const { data, error, response } = await api.GET('/api/instance/{userId}/token', { params: { path: { userId: me.value!.id } } });
            if (data) token.value = data.token;
            else failure.value = describeError(response.status, error);
          }}
        >
          Reveal token
        </ActionButton>
      )}
      <Notice kind="error" message={failure.value} />
    </div>
  );
}

const OPS: { op: LifecycleOp; label: string; settles: 'running' | 'stopped' }[] = [
  { op: 'start', label: 'Start', settles: 'running' },
  { op: 'stop', label: 'Stop', settles: 'stopped' },
  { op: 'restart', label: 'Restart', settles: 'running' },
  { op: 'update', label: 'Update', settles: 'running' },
  { op: 'repair', label: 'Repair', settles: 'running' },
  { op: 'reset-memory', label: 'Reset memory', settles: 'running' },
];

/** The instance's lifecycle operations; each answer is shown, then the outcome as it happens. */
function Lifecycle({ onSettled }: { onSettled: () => Promise<void> }) {
  const answer = useSignal<string | undefined>(undefined);
  const failed = useSignal(false);
  const run = async (op: LifecycleOp, settles: 'running' | 'stopped') => {
    if (op === 'reset-memory' && !confirm('Erase every memory key of this account’s agents?')) return;
    const path = { userId: me.value!.id };
    const { data, error, response } = await api.POST(`/api/instance/{userId}/${op}`, { params: { path } });
    failed.value = !response.ok;
    if (!response.ok) {
      answer.value = `${op}: ${describeError(response.status, error)}`;
      return;
    }
    const body = data as { current?: string; operationId?: string };
    answer.value = `${op} accepted: the instance is ${body.current ?? 'changing'} (operation ${body.operationId ?? '—'}).`;
    await onSettled();
    const status = await followInstance(settles, () => false);
    answer.value = `${op}: the instance is now ${status ?? 'unknown'}.`;
    await onSettled();
  };
  return (
    <div class="panel">
      <h2>Lifecycle</h2>
      <div class="row">
        {OPS.map(({ op, label, settles }) => (
          <ActionButton key={op} class={op === 'stop' || op === 'reset-memory' ? 'danger' : 'secondary'} onAction={() => run(op, settles)}>
            {label}
          </ActionButton>
        ))}
      </div>
      <Notice kind={failed.value ? 'error' : 'info'} message={answer.value} />
    </div>
  );
}

type LogEntry = Schemas['AgentLogEntry'] extends infer E ? E : never;

function logLine(entry: { kind: string; at: string; [k: string]: unknown }): string {
  const at = new Date(entry.at).toLocaleTimeString();
  if (entry.kind === 'runtime') return `${at} [${entry.stream}] ${entry.line}`;
  if (entry.kind === 'message') return `${at} ${entry.role}: ${entry.content}`;
  return `${at} ${entry.type}${entry.status ? ` → ${entry.status}` : ''}${entry.reason ? ` (${entry.reason})` : ''}`;
}

/** The per-agent log as server-sent events: the newest entries, then new ones as they are stored. */
function LiveLog({ agentId }: { agentId: string }) {
  const lines = useSignal<{ id: string; text: string }[]>([]);
  const live = useSignal(false);
  const list = useRef<HTMLOListElement>(null);
  useEffect(() => {
    const seen = new Set<string>();
    let source: EventSource | undefined;
    let closed = false;
    const open = () => {
      source = new EventSource(`/api/agents/${encodeURIComponent(agentId)}/logs?follow=${LOG_FOLLOW_SECONDS}&limit=50`);
      source.onopen = () => (live.value = true);
      source.addEventListener('entry', (event) => {
        const entry = JSON.parse((event as MessageEvent<string>).data) as LogEntry & { id: string; kind: string; at: string };
        if (seen.has(entry.id)) return;
        seen.add(entry.id);
        lines.value = [...lines.value, { id: entry.id, text: logLine(entry) }].slice(-LOG_MAX_LINES);
      });
      // The server ends the stream after `follow` seconds: open the next one (entries already shown are skipped).
      source.addEventListener('end', () => {
        source?.close();
        if (!closed) open();
      });
      source.onerror = () => (live.value = false);
    };
    open();
    return () => {
      closed = true;
      source?.close();
    };
  }, [agentId]);
  useEffect(() => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [lines.value]);
  return (
    <div class="panel">
      <h2>Live log {live.value ? '' : '(connecting…)'}</h2>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable from the keyboard */}
      <ol class="log" ref={list} tabIndex={0} aria-label="Agent log">
        {lines.value.map((l) => (
          <li key={l.id}>{l.text}</li>
        ))}
      </ol>
    </div>
  );
}

/**
 * Chat with the agent. The answer streams in over the agent's own websocket through the edge when
 * it is open (`delta` frames, then `done`), or else as server-sent events from `POST /api/chat` with
 * `stream: true`, which also wakes an instance stopped for idleness. Either way the runtime stores the exchange
 * in the agent's history.
 */
function Chat({ agentId, websocketUrl }: { agentId: string; websocketUrl?: string }) {
  const messages = useSignal<{ role: 'user' | 'assistant'; content: string }[]>([]);
  const draft = useSignal('');
  const failure = useSignal<string | undefined>(undefined);
  const streaming = useSignal(false);
  const direct = useSignal(false);
  const socket = useRef<ReturnType<typeof agentSocket> | undefined>(undefined);
  useEffect(() => {
    if (!websocketUrl) return;
    const opened = agentSocket(websocketUrl, (ready) => (direct.value = ready));
    socket.current = opened;
    return () => {
      opened.close();
      socket.current = undefined;
      direct.value = false;
    };
  }, [websocketUrl]);

  const appendDelta = (content: string) => {
    const last = messages.value.at(-1)!;
    messages.value = [...messages.value.slice(0, -1), { ...last, content: last.content + content }];
  };
  // The stored reply is the answer of record.
  const finish = (content: string) => {
    messages.value = [...messages.value.slice(0, -1), { role: 'assistant', content }];
  };
  const CUT_OFF = 'The answer was cut off: the connection ended before the agent finished.';

  const overSocket = (message: string) =>
    new Promise<boolean>((resolve) => {
      const sent = socket.current?.send(message, {
        delta: appendDelta,
        done: (content) => {
          finish(content);
          resolve(true);
        },
        error: (body) => {
          failure.value = describeError(502, body);
          resolve(true);
        },
        cut: () => {
          failure.value = CUT_OFF;
          resolve(true);
        },
      });
      if (!sent) resolve(false);
    });

  const overHttp = async (message: string, history: typeof messages.value) => {
    const { response, error } = await api.POST('/api/chat', {
      body: { agentId, message, stream: true },
      headers: { accept: 'text/event-stream' },
      parseAs: 'stream',
    });
    if (!response.ok || !response.body) {
      failure.value = describeError(response.status, error ?? (await response.json().catch(() => undefined)));
      messages.value = history;
      return;
    }
    let ended = false;
    await readEventStream(response.body, (name, data) => {
      if (name === 'delta') appendDelta((JSON.parse(data) as { content: string }).content);
      else if (name === 'done') {
        finish((JSON.parse(data) as { reply: { content: string } }).reply.content);
        ended = true;
      } else if (name === 'error') {
        failure.value = describeError(502, JSON.parse(data));
        ended = true;
      }
    });
    if (!ended) failure.value = CUT_OFF;
  };

  return (
    <div class="panel">
      <h2>Chat</h2>
      <p class="hint" data-testid="chat-transport">
        {direct.value ? 'Connected to the agent’s websocket.' : 'Through the platform (the agent’s websocket is not open).'}
      </p>
      <ul class="chat" aria-live="polite" aria-label="Conversation">
        {messages.value.map((m, i) => (
          <li key={i} class={m.role}>
            <span class="visually-hidden">{m.role === 'user' ? 'You: ' : 'Answer: '}</span>
            {m.content}
          </li>
        ))}
      </ul>
      <form
        class="inline-form"
        onFocusIn={() => socket.current?.wake()}
        onSubmit={async (event) => {
          event.preventDefault();
          if (!draft.value.trim() || streaming.value) return;
          failure.value = undefined;
          const message = draft.value;
          const history = [...messages.value, { role: 'user' as const, content: message }];
          messages.value = [...history, { role: 'assistant', content: '' }];
          draft.value = '';
          streaming.value = true;
          try {
            if (!(await overSocket(message))) await overHttp(message, history);
          } finally {
            streaming.value = false;
          }
        }}
      >
        <Field label="Message" required value={draft.value} onValue={(v) => (draft.value = v)} />
        <button type="submit" disabled={streaming.value}>
          {streaming.value ? 'Answering…' : 'Send'}
        </button>
      </form>
      <Notice kind="error" message={failure.value} />
    </div>
  );
}

const byteLength = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

/** The agent's key-value memory; values are JSON, checked against the API's limits before sending. */
function Memory({ agentId }: { agentId: string }) {
  const memory = useSignal<Record<string, unknown>>({});
  const key = useSignal('');
  const value = useSignal('');
  const bulk = useSignal('');
  const note = useSignal<{ kind: 'ok' | 'error'; text: string } | undefined>(undefined);
  const load = async () => {
    const { data } = await api.GET('/api/memory', { params: { query: { agentId } } });
    memory.value = data?.memory ?? {};
  };
  useEffect(() => void load(), [agentId]);
  const entries = useComputed(() => Object.entries(memory.value));

  const parse = (text: string): { ok: true; value: unknown } | { ok: false } => {
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch {
      return { ok: false };
    }
  };
  const save = async (body: { agentId: string; key: string; memory: unknown } | { agentId: string; memory: Record<string, unknown> }) => {
    const { response, error } = await api.POST('/api/memory', { body: body as never });
    note.value = response.ok ? { kind: 'ok', text: 'Saved.' } : { kind: 'error', text: describeError(response.status, error) };
    if (response.ok) await load();
  };
  return (
    <div class="panel">
      <h2>Memory</h2>
      {entries.value.length === 0 ? (
        <p>No memory yet.</p>
      ) : (
        <table class="responsive">
          <caption class="visually-hidden">Memory keys and values</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Value</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {entries.value.map(([k, v]) => (
              <tr key={k}>
                <td>
                  <code>{k}</code>
                </td>
                <td>
                  <code>{JSON.stringify(v)}</code>
                </td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    onClick={() => {
                      key.value = k;
                      value.value = JSON.stringify(v, null, 2);
                    }}
                  >
                    Edit <span class="visually-hidden">{k}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const parsed = parse(value.value);
          if (!parsed.ok) return void (note.value = { kind: 'error', text: 'The value must be JSON (a "quoted string", a number, an object…).' });
          if (byteLength(parsed.value) > MEMORY_VALUE_MAX_BYTES)
            return void (note.value = {
              kind: 'error',
              text: `The value is ${byteLength(parsed.value)} bytes; the limit is 100 KB (${MEMORY_VALUE_MAX_BYTES} bytes).`,
            });
          await save({ agentId, key: key.value, memory: parsed.value });
        }}
      >
        <Field label="Key" required maxLength={256} value={key.value} onValue={(v) => (key.value = v)} />
        <TextArea label="Value (JSON)" hint="At most 100 KB." value={value.value} onValue={(v) => (value.value = v)} rows={4} />
        <button type="submit">Save key</button>
      </form>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const parsed = parse(bulk.value);
          if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value))
            return void (note.value = { kind: 'error', text: 'Bulk memory must be a JSON object of keys to values.' });
          const map = parsed.value as Record<string, unknown>;
          const keys = Object.keys(map);
          if (keys.length === 0 || keys.length > MEMORY_BULK_MAX_KEYS)
            return void (note.value = { kind: 'error', text: `A bulk write takes 1 to ${MEMORY_BULK_MAX_KEYS} keys; this has ${keys.length}.` });
          const large = keys.find((k) => byteLength(map[k]) > MEMORY_VALUE_MAX_BYTES);
          if (large) return void (note.value = { kind: 'error', text: `The value of "${large}" is over 100 KB.` });
          await save({ agentId, memory: map });
        }}
      >
        <TextArea
          label="Bulk write (JSON object)"
          hint={`Up to ${MEMORY_BULK_MAX_KEYS} keys, each value at most 100 KB.`}
          value={bulk.value}
          onValue={(v) => (bulk.value = v)}
          rows={3}
        />
        <button type="submit" class="secondary">
          Write keys
        </button>
      </form>
      {note.value && <Notice kind={note.value.kind} message={note.value.text} />}
    </div>
  );
}

function InstalledSkills({ agentId }: { agentId: string }) {
  const skills = useSignal<{ skillId: string; enabled: boolean; installedAt: string }[] | undefined>(undefined);
  const limit = useSignal<number | undefined>(undefined);
  const failure = useSignal<string | undefined>(undefined);
  const load = async () => {
    const { data } = await api.GET('/api/agents/{agentId}/skills', { params: { path: { agentId } } });
    skills.value = data?.skills ?? [];
    limit.value = data?.limit;
  };
  useEffect(() => void load(), [agentId]);
  return (
    <div class="panel">
      <h2>Installed skills</h2>
      <p>
        {skills.value?.length ?? 0} of {limit.value ?? '—'} skills.{' '}
        <Link href={`/marketplace?agent=${encodeURIComponent(agentId)}`}>Browse the marketplace</Link>
      </p>
      <ul>
        {skills.value?.map((s) => (
          <li key={s.skillId} class="row">
            <span>
              {s.skillId} {s.enabled ? '' : '(disabled)'}
            </span>
            <ActionButton
              class="danger"
              onAction={async () => {
                const { response, error } = await api.DELETE('/api/agents/{agentId}/skills/{skillId}', { params: { path: { agentId, skillId: s.skillId } } });
                if (!response.ok) failure.value = describeError(response.status, error);
                await load();
              }}
            >
              Uninstall <span class="visually-hidden">{s.skillId}</span>
            </ActionButton>
          </li>
        ))}
      </ul>
      <Notice kind="error" message={failure.value} />
    </div>
  );
}
