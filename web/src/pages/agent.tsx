import { useComputed, useSignal } from '@preact/signals';
import { useEffect, useId, useRef } from 'preact/hooks';
import { type Answer, api, type Schemas } from '../api';
import { agentSocket } from '../agent-socket';
import { describeError, type ExplainedError, explainError } from '../errors';
import { failoverCauseInWords, type OpenFailover, openFailovers } from '../failover';
import { followInstance } from '../live';
import { readEventStream } from '../sse';
import { currentUrl, Link, navigate } from '../router';
import { me } from '../state';
import {
  ActionButton,
  ConfirmDialog,
  CopyButton,
  ErrorNotice,
  Field,
  formatDate,
  formatMoney,
  ItemList,
  NotFound,
  Notice,
  PageTitle,
  SectionNav,
  TextArea,
} from '../ui';
import { StatusBadge } from './dashboard';

const MEMORY_VALUE_MAX_BYTES = 100 * 1024;
const MEMORY_BULK_MAX_KEYS = 50;
const LOG_FOLLOW_SECONDS = 300;
const LOG_MAX_LINES = 200;

type Agent = NonNullable<Awaited<ReturnType<typeof loadAgent>>>;
type LifecycleOp = 'start' | 'stop' | 'restart' | 'update' | 'repair' | 'reset-memory';
type Action = LifecycleOp | 'delete';

async function loadAgent(id: string) {
  const { data } = await api.GET('/api/agents/{id}', { params: { path: { id } } });
  return data?.agent;
}

const SECTIONS = [
  { id: 'overview', label: 'Overview' },
  { id: 'chat', label: 'Chat' },
  { id: 'logs', label: 'Logs' },
  { id: 'events', label: 'Events' },
  { id: 'schedules', label: 'Schedules' },
  { id: 'budget', label: 'Budget' },
  { id: 'skills', label: 'Skills' },
  { id: 'memory', label: 'Memory' },
  { id: 'checkpoints', label: 'Checkpoints' },
  { id: 'settings', label: 'Settings' },
] as const;
type Section = (typeof SECTIONS)[number]['id'];

const sectionOf = (value: string | null): Section => (SECTIONS.some((s) => s.id === value) ? (value as Section) : 'overview');

/** The agent's page: its lifecycle above, and its sections as addressable tabs (`?tab=chat`). */
export function AgentPage({ id }: { id: string }) {
  const agent = useSignal<Agent | null | undefined>(undefined);
  const refresh = async () => {
    agent.value = (await loadAgent(id)) ?? null;
    return agent.value;
  };
  const lifecycle = useLifecycle(id, refresh);
  useEffect(() => void refresh(), [id]);
  if (agent.value === undefined) return <p role="status">Loading…</p>;
  if (agent.value === null) return <NotFound title="Agent not found" />;
  const a = agent.value;
  const section = sectionOf(currentUrl.value.searchParams.get('tab'));
  const start = () => lifecycle.run('start');
  return (
    <section>
      <div class="title-row">
        <PageTitle>{a.name}</PageTitle>
        <span aria-live="polite" data-testid="agent-status">
          <StatusBadge status={a.status} />
        </span>
      </div>
      <Lifecycle status={a.status} lifecycle={lifecycle} />
      {a.paused && <PausedNotice agentId={a.id} paused={a.paused} onResumed={refresh} />}
      <SectionNav
        label="Agent sections"
        sections={SECTIONS}
        current={section}
        hrefOf={(s) => `/agents/${encodeURIComponent(a.id)}${s === 'overview' ? '' : `?tab=${s}`}`}
      />
      <div class="section-body">
        {section === 'overview' && <Overview agent={a} />}
        {section === 'chat' && <Chat agentId={a.id} websocketUrl={a.status === 'running' ? a.websocketUrl : undefined} onStart={start} />}
        {section === 'logs' && <LiveLog agentId={a.id} />}
        {section === 'events' && <Events agentId={a.id} />}
        {section === 'schedules' && <Schedules agentId={a.id} />}
        {section === 'budget' && <Budget agentId={a.id} />}
        {section === 'skills' && <InstalledSkills agentId={a.id} />}
        {section === 'memory' && <Memory agentId={a.id} />}
        {section === 'checkpoints' && <Checkpoints agentId={a.id} />}
        {section === 'settings' && <AgentSettings agentId={a.id} />}
      </div>
    </section>
  );
}

/** Why the agent's metered calls are refused, and the way out: resume after a loop, raise the cap after a budget stop. */
function PausedNotice({ agentId, paused, onResumed }: { agentId: string; paused: NonNullable<Agent['paused']>; onResumed: () => Promise<unknown> }) {
  const failure = useSignal<ExplainedError | undefined>(undefined);
  if (paused.reason === 'budget') {
    return (
      <div class="notice notice-error" role="alert" data-testid="agent-paused">
        <span>This agent reached its spending cap, so its model and skill calls are paused. Raise the cap to resume it.</span>
        <Link href={`/agents/${encodeURIComponent(agentId)}?tab=budget`} class="button secondary">
          Open the budget
        </Link>
      </div>
    );
  }
  const loop = paused.loop;
  const resume = async () => {
    const { error, response } = await api.POST('/api/agents/{id}/loop-breaker/resume', { params: { path: { id: agentId } } });
    failure.value = error ? explainError(response.status, error) : undefined;
    if (!error) await onResumed();
  };
  return (
    <div class="notice notice-error" role="alert" data-testid="agent-paused">
      <span>
        This agent was paused{paused.at ? ` on ${formatDate(paused.at)}` : ''} for repeating itself
        {loop ? `: ${loop.call ?? 'one call'} ${loop.count ?? ''} times` : ''}. Its model and skill calls are refused until you resume it.
      </span>
      <ActionButton class="secondary" onAction={resume}>
        Resume the agent
      </ActionButton>
      <ErrorNotice error={failure.value} />
    </div>
  );
}

function Overview({ agent: a }: { agent: Agent }) {
  const running = a.status === 'running';
  return (
    <div class="panel">
      <h2>Overview</h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={a.status} />
        </dd>
        {a.failureReason && (
          <>
            <dt>Why</dt>
            <dd>{a.failureReason}</dd>
          </>
        )}
        <dt>URL</dt>
        <dd>{running ? <code>{a.url}</code> : <span class="hint">Reachable once the agent runs.</span>}</dd>
        <dt>Websocket</dt>
        <dd>{running ? <code>{a.websocketUrl}</code> : <span class="hint">Open once the agent runs.</span>}</dd>
        <dt>Model</dt>
        <dd>{a.model}</dd>
        <ModelFallbacks agentId={a.id} />
        <dt>Runtime</dt>
        <dd>{a.runtimeVersion}</dd>
        {running && a.startedAt && (
          <>
            <dt>Started</dt>
            <dd>{formatDate(a.startedAt)}</dd>
          </>
        )}
        <dt>Created</dt>
        <dd>{formatDate(a.createdAt)}</dd>
      </dl>
      <GatewayToken />
    </div>
  );
}

/**
 * A model the agent is not answered by right now: the platform moved its calls to the fallback
 * (`model.failover`) and moves them back by itself (`model.restored`). Read from the newest events.
 */
function ModelFallbacks({ agentId }: { agentId: string }) {
  const open = useSignal<OpenFailover[]>([]);
  useEffect(() => {
    void api
      .GET('/api/instance/{userId}/events', { params: { path: { userId: me.value!.id }, query: { limit: 50 } } })
      .then(({ data }) => (open.value = data ? openFailovers(data.events, agentId) : []));
  }, [agentId]);
  if (open.value.length === 0) return null;
  return (
    <>
      <dt>Answered by</dt>
      {open.value.map((f) => (
        <dd key={f.model} data-testid="model-fallback">
          {f.fallback}, since {formatDate(f.since)}: {f.model} is not used because {failoverCauseInWords(f.cause)}. Calls go back to {f.model} by themselves
          once it answers again.
        </dd>
      ))}
    </>
  );
}

/** The gateway token, fetched only when asked for and never kept beyond the page. */
function GatewayToken() {
  const token = useSignal<string | undefined>(undefined);
  const failure = useSignal<ExplainedError | undefined>(undefined);
  return (
    <div>
      <h3>Gateway token</h3>
      <p class="hint">
        Programs call the agent with it as <code>Authorization: Bearer</code>. Keep it secret.
      </p>
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
            else failure.value = explainError(response.status, error);
          }}
        >
          Reveal token
        </ActionButton>
      )}
      <ErrorNotice error={failure.value} />
    </div>
  );
}

const ACTIONS: { action: Action; label: string; destructive?: true }[] = [
  { action: 'start', label: 'Start' },
  { action: 'stop', label: 'Stop', destructive: true },
  { action: 'restart', label: 'Restart', destructive: true },
  { action: 'update', label: 'Update runtime' },
  { action: 'repair', label: 'Repair' },
  { action: 'reset-memory', label: 'Reset memory', destructive: true },
  { action: 'delete', label: 'Delete agent', destructive: true },
];

/** What each status allows: an action that would change nothing, or that the state machine refuses, is not offered. */
const VALID: Record<string, readonly Action[]> = {
  running: ['stop', 'restart', 'update', 'reset-memory', 'delete'],
  stopped: ['start', 'reset-memory', 'delete'],
  provisioning: ['stop', 'delete'],
  error: ['start', 'repair', 'stop', 'reset-memory', 'delete'],
};

const SETTLES: Record<LifecycleOp, 'running' | 'stopped'> = {
  start: 'running',
  stop: 'stopped',
  restart: 'running',
  update: 'running',
  repair: 'running',
  'reset-memory': 'running',
};

const PROGRESS: Record<Action, string> = {
  start: 'Starting the agent…',
  stop: 'Stopping the agent…',
  restart: 'Restarting the agent…',
  update: 'Updating the runtime…',
  repair: 'Repairing the agent…',
  'reset-memory': 'Erasing the memory…',
  delete: 'Deleting the agent…',
};

const CONFIRM: Partial<Record<Action, { title: string; body: string; confirm: string }>> = {
  stop: { title: 'Stop the agent?', body: 'Your agents stop answering (chat, schedules, channels) until you start them again.', confirm: 'Stop' },
  restart: { title: 'Restart the agent?', body: 'Your agents stop answering for the moment the restart takes.', confirm: 'Restart' },
  'reset-memory': {
    title: 'Erase the memory?',
    body: 'Every memory key of this account’s agents is erased for good, and running agents restart without it.',
    confirm: 'Erase memory',
  },
  delete: { title: 'Delete this agent?', body: 'The agent, its chat history and its memory are deleted for good.', confirm: 'Delete agent' },
};

/** The outcome in words, from the status the instance settled in. */
function outcomeOf(op: LifecycleOp, status: string | undefined): { kind: 'ok' | 'error'; text: string } {
  if (status === 'error') return { kind: 'error', text: 'The agent failed to start: see Overview for why, then try Repair.' };
  if (op === 'stop' && status === 'stopped') return { kind: 'ok', text: 'Stopped: the agent no longer answers until you start it.' };
  if (status === 'running')
    return {
      kind: 'ok',
      text: {
        start: 'Started: the agent is running and answers.',
        stop: 'The agent is running.',
        restart: 'Restarted: the agent is running again.',
        update: 'Updated: the agent runs the latest runtime.',
        repair: 'Repaired: the agent is running again.',
        'reset-memory': 'Memory erased: the agent is running again without it.',
      }[op],
    };
  if (op === 'reset-memory' && status === 'stopped') return { kind: 'ok', text: 'Memory erased.' };
  return { kind: 'error', text: `The agent is now ${status ?? 'in an unknown state'}: reload the page to see where it stands.` };
}

/** Runs a lifecycle operation, follows the instance until it settles and reads the agent again. */
function useLifecycle(agentId: string, refresh: () => Promise<Agent | null>) {
  const running = useSignal<Action | undefined>(undefined);
  const outcome = useSignal<{ kind: 'ok' | 'error'; text: string } | undefined>(undefined);
  const failure = useSignal<ExplainedError | undefined>(undefined);
  const run = async (action: Action) => {
    running.value = action;
    outcome.value = undefined;
    failure.value = undefined;
    try {
      if (action === 'delete') {
        const { response, error } = await api.DELETE('/api/agents/{id}', { params: { path: { id: agentId } } });
        if (!response.ok) return void (failure.value = explainError(response.status, error));
        return navigate('/');
      }
      const { error, response } = await api.POST(`/api/instance/{userId}/${action}`, { params: { path: { userId: me.value!.id } } });
      if (!response.ok) return void (failure.value = explainError(response.status, error));
      await refresh();
      const status = await followInstance(SETTLES[action], () => false);
      // The agent's own status follows the instance's in the write that settles it, or once the runtime reloads.
      for (let reads = 0; reads < 20; reads++) {
        const agent = await refresh();
        if (!agent || !status || agent.status === status) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      outcome.value = outcomeOf(action, status);
    } finally {
      running.value = undefined;
    }
  };
  return { running, outcome, failure, run };
}

/** The lifecycle bar: only the actions the status allows are enabled; the destructive ones ask first. */
function Lifecycle({ status, lifecycle }: { status: string; lifecycle: ReturnType<typeof useLifecycle> }) {
  const confirming = useSignal<Action | undefined>(undefined);
  const busy = lifecycle.running.value;
  const valid = VALID[status] ?? ['delete'];
  const asked = confirming.value ? CONFIRM[confirming.value] : undefined;
  return (
    <fieldset class="panel lifecycle">
      <legend class="visually-hidden">Lifecycle</legend>
      <div class="row">
        {ACTIONS.map(({ action, label, destructive }) => (
          <button
            key={action}
            type="button"
            class={destructive ? 'danger' : action === 'start' ? undefined : 'secondary'}
            disabled={!!busy || !valid.includes(action)}
            aria-busy={busy === action}
            onClick={() => (CONFIRM[action] ? (confirming.value = action) : void lifecycle.run(action))}
          >
            {label}
          </button>
        ))}
      </div>
      {busy && (
        <p role="status" class="progress-line">
          <progress aria-label={PROGRESS[busy]} />
          {PROGRESS[busy]}
        </p>
      )}
      {lifecycle.outcome.value && <Notice kind={lifecycle.outcome.value.kind} message={lifecycle.outcome.value.text} />}
      <ErrorNotice error={lifecycle.failure.value} />
      <ConfirmDialog
        open={!!asked}
        title={asked?.title ?? ''}
        confirmLabel={asked?.confirm ?? ''}
        onCancel={() => (confirming.value = undefined)}
        onConfirm={() => {
          const action = confirming.value!;
          confirming.value = undefined;
          void lifecycle.run(action);
        }}
      >
        <p>{asked?.body}</p>
      </ConfirmDialog>
    </fieldset>
  );
}

type LogEntry = Schemas['AgentLogEntry'];

interface LogLine {
  id: string;
  at: string;
  level: string;
  source: string;
  message: string;
}

/** A log entry as a line a person reads: the runtime's JSON lines are unpacked into level and message. */
export function logLine(entry: LogEntry): LogLine {
  const base = { id: entry.id, at: entry.at };
  if (entry.kind === 'message') return { ...base, level: 'info', source: 'chat', message: `${entry.role === 'user' ? 'You' : entry.role}: ${entry.content}` };
  if (entry.kind === 'lifecycle') {
    const detail = [entry.status && `now ${entry.status}`, entry.reason && `because ${entry.reason}`].filter(Boolean).join(', ');
    return { ...base, level: entry.status === 'error' ? 'error' : 'info', source: 'lifecycle', message: detail ? `${entry.type} (${detail})` : entry.type };
  }
  let level = entry.level ?? (entry.stream === 'stderr' ? 'warn' : 'info');
  let message = entry.line;
  let source = entry.stream === 'runtime' ? 'runtime' : entry.stream;
  if (entry.line.startsWith('{')) {
    try {
      const parsed = JSON.parse(entry.line) as { level?: unknown; message?: unknown; msg?: unknown; service?: unknown };
      if (typeof parsed.level === 'string') level = parsed.level;
      if (typeof parsed.service === 'string') source = parsed.service;
      const text = parsed.message ?? parsed.msg;
      if (typeof text === 'string') message = text;
    } catch {
      // not JSON after all: the line as it is
    }
  }
  return { ...base, level, source, message };
}

/** The per-agent log as server-sent events: the newest entries, then, while following, new ones as they are stored. */
function LiveLog({ agentId }: { agentId: string }) {
  const lines = useSignal<LogLine[]>([]);
  const live = useSignal(false);
  const follow = useSignal(true);
  const list = useRef<HTMLOListElement>(null);
  const followId = useId();
  useEffect(() => {
    if (!follow.value) return;
    const seen = new Set(lines.value.map((l) => l.id));
    let source: EventSource | undefined;
    let closed = false;
    const open = () => {
      source = new EventSource(`/api/agents/${encodeURIComponent(agentId)}/logs?follow=${LOG_FOLLOW_SECONDS}&limit=50`);
      source.onopen = () => (live.value = true);
      source.addEventListener('entry', (event) => {
        const entry = JSON.parse((event as MessageEvent<string>).data) as LogEntry;
        if (seen.has(entry.id)) return;
        seen.add(entry.id);
        lines.value = [...lines.value, logLine(entry)].slice(-LOG_MAX_LINES);
      });
      // The server ends the stream after `follow` seconds: open the next one (entries already shown are skipped).
      source.addEventListener('end', () => {
        source?.close();
        live.value = false;
        if (!closed) open();
      });
      source.onerror = () => (live.value = false);
    };
    open();
    return () => {
      closed = true;
      live.value = false;
      source?.close();
    };
  }, [agentId, follow.value]);
  useEffect(() => {
    const el = list.current;
    if (el && follow.value) el.scrollTop = el.scrollHeight;
  }, [lines.value]);
  return (
    <div class="panel">
      <div class="row spread">
        <h2>Log</h2>
        <div class="check">
          <input id={followId} type="checkbox" checked={follow.value} onChange={(e) => (follow.value = e.currentTarget.checked)} />
          <label for={followId}>Follow new lines</label>
        </div>
      </div>
      <p class="hint" role="status">
        {follow.value ? (live.value ? 'Following: new lines appear as they are written.' : 'Connecting…') : 'Paused: new lines are not shown.'}
      </p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable from the keyboard */}
      <ol class="log" ref={list} tabIndex={0} aria-label="Agent log">
        {lines.value.length === 0 && <li class="log-empty">No log lines yet.</li>}
        {lines.value.map((l) => (
          <li key={l.id} class={`log-line log-${l.level}`}>
            <time dateTime={l.at}>{new Date(l.at).toLocaleTimeString()}</time>
            <span class="log-level">{l.level}</span>
            <span class="log-source">{l.source}</span>
            <span class="log-message">{l.message}</span>
          </li>
        ))}
      </ol>
    </div>
  );
}

type LifecycleEvent = Schemas['LifecycleEventRecord'];

/** The lifecycle event log of the agent's instance: every transition, when, why and by whom. */
function Events({ agentId }: { agentId: string }) {
  const events = useSignal<LifecycleEvent[] | undefined>(undefined);
  const cursor = useSignal<string | null>(null);
  const failure = useSignal<ExplainedError | undefined>(undefined);
  const load = async (from?: string) => {
    const { data, error, response } = await api.GET('/api/instance/{userId}/events', {
      params: { path: { userId: me.value!.id }, query: { limit: 50, ...(from ? { cursor: from } : {}) } },
    });
    if (!data) return void (failure.value = explainError(response.status, error));
    const mine = data.events.filter((e) => !e.agentId || e.agentId === agentId);
    events.value = [...(from ? (events.value ?? []) : []), ...mine];
    cursor.value = data.cursor;
  };
  useEffect(() => void load(), [agentId]);
  return (
    <div class="panel">
      <h2>Events</h2>
      <ErrorNotice error={failure.value} />
      {events.value?.length === 0 ? (
        <p class="empty">No events yet.</p>
      ) : (
        <table class="responsive">
          <caption class="visually-hidden">Lifecycle events, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Cause</th>
            </tr>
          </thead>
          <tbody>
            {events.value?.map((e) => (
              <tr key={e.id}>
                <td>{formatDate(e.at)}</td>
                <td>
                  {e.type}
                  {e.op ? ` (${e.op})` : ''}
                </td>
                <td>{e.status ?? '—'}</td>
                <td>
                  {e.cause}
                  {e.reason ? `: ${e.reason}` : ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {cursor.value && (
        <ActionButton class="secondary" onAction={() => load(cursor.value!)}>
          Older events
        </ActionButton>
      )}
    </div>
  );
}

type Schedule = Answer<'listAgentSchedules'>['schedules'][number];

/** Scheduled prompts: what runs when, how the last run went, and a form for a new one. */
function Schedules({ agentId }: { agentId: string }) {
  const schedules = useSignal<Schedule[] | undefined>(undefined);
  const prompt = useSignal('');
  const cron = useSignal('');
  const failure = useSignal<ExplainedError | undefined>(undefined);
  const note = useSignal<string | undefined>(undefined);
  const load = async () => {
    const { data } = await api.GET('/api/agents/{id}/schedules', { params: { path: { id: agentId } } });
    schedules.value = data?.schedules ?? [];
  };
  useEffect(() => void load(), [agentId]);
  return (
    <div class="panel">
      <h2>Schedules</h2>
      <ItemList
        label="Schedules"
        items={schedules.value}
        empty="No schedules yet: add a prompt below and the agent answers it on its own at the times you give."
        keyOf={(s) => s.id}
        render={(s) => (
          <div class="item">
            <div>
              <strong>{s.prompt}</strong>
              <p class="hint">
                {s.cron ? `Cron ${s.cron} (UTC)` : `Once at ${formatDate(s.at)}`} · {s.status}
                {s.nextRunAt ? ` · next ${formatDate(s.nextRunAt)}` : ''}
                {s.lastRun ? ` · last ${s.lastRun.status} ${formatDate(s.lastRun.at)}${s.lastRun.reason ? ` (${s.lastRun.reason})` : ''}` : ''}
              </p>
            </div>
            <ActionButton
              class="danger"
              onAction={async () => {
                const { response, error } = await api.DELETE('/api/agents/{id}/schedules/{scheduleId}', {
                  params: { path: { id: agentId, scheduleId: s.id } },
                });
                failure.value = response.ok ? undefined : explainError(response.status, error);
                await load();
              }}
            >
              Delete <span class="visually-hidden">schedule {s.prompt}</span>
            </ActionButton>
          </div>
        )}
      />
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          failure.value = undefined;
          const { response, error } = await api.POST('/api/agents/{id}/schedules', {
            params: { path: { id: agentId } },
            body: { prompt: prompt.value, cron: cron.value },
          });
          if (!response.ok) return void (failure.value = explainError(response.status, error));
          note.value = 'Schedule added.';
          prompt.value = cron.value = '';
          await load();
        }}
      >
        <h3>New schedule</h3>
        <TextArea label="Prompt" value={prompt.value} onValue={(v) => (prompt.value = v)} rows={2} />
        <Field
          label="When (cron, UTC)"
          required
          hint="Five fields: minute hour day month weekday, e.g. 0 9 * * 1 for Mondays at 09:00."
          value={cron.value}
          onValue={(v) => (cron.value = v)}
        />
        <button type="submit">Add schedule</button>
      </form>
      <Notice kind="ok" message={note.value} />
      <ErrorNotice error={failure.value} />
    </div>
  );
}

type Checkpoint = Answer<'listAgentCheckpoints'>['checkpoints'][number];
type CheckpointLimits = Answer<'listAgentCheckpoints'>['limits'];

const formatSize = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

const REASONS: Record<string, string> = {
  'reset-memory': 'before a memory reset',
  update: 'before an update',
  'memory-write': 'before a bulk memory write',
  rewind: 'before a restore',
};

/** Checkpoints: the named ones and the automatic ones taken before a change, each restorable in place or clonable into a new agent. */
function Checkpoints({ agentId }: { agentId: string }) {
  const checkpoints = useSignal<Checkpoint[] | undefined>(undefined);
  const limits = useSignal<CheckpointLimits | undefined>(undefined);
  const name = useSignal('');
  const restoring = useSignal<Checkpoint | undefined>(undefined);
  const failure = useSignal<ExplainedError | undefined>(undefined);
  const note = useSignal<string | undefined>(undefined);
  const load = async () => {
    const { data, error, response } = await api.GET('/api/agents/{id}/checkpoints', { params: { path: { id: agentId } } });
    if (!data) failure.value = explainError(response.status, error);
    checkpoints.value = data?.checkpoints ?? [];
    limits.value = data?.limits;
  };
  useEffect(() => void load(), [agentId]);
  const restore = async (c: Checkpoint) => {
    failure.value = note.value = undefined;
    const { data, error, response } = await api.POST('/api/agents/{id}/checkpoints/{checkpointId}/rewind', {
      params: { path: { id: agentId, checkpointId: c.id } },
    });
    if (!data) return void (failure.value = explainError(response.status, error));
    note.value = `Restored “${c.name}”: ${data.restored.memoryKeys} memory keys back, ${data.restored.memoryKeysRemoved} removed.${
      data.instanceTold ? ' The running agent has it now.' : ' The agent loads it at its next start.'
    } The state before is kept as an automatic checkpoint.`;
    await load();
  };
  const l = limits.value;
  return (
    <div class="panel">
      <h2>Checkpoints</h2>
      <p class="hint">
        A checkpoint keeps this agent’s configuration, memory, skills, schedules and recent messages, never a secret.
        {l ? ` Named: ${l.named.current} of ${l.named.limit}. Automatic ones are kept ${l.autoKeptDays} days.` : ''}
      </p>
      <ItemList
        label="Checkpoints"
        items={checkpoints.value}
        empty="No checkpoints yet: create one before a change you may want to undo."
        keyOf={(c) => c.id}
        render={(c) => (
          <div class="item">
            <div>
              <strong>{c.name}</strong>
              <p class="hint">
                {c.kind === 'auto' ? `Automatic, ${REASONS[c.reason ?? ''] ?? 'before a change'}` : 'Named'} · {formatDate(c.createdAt)} ·{' '}
                {formatSize(c.sizeBytes)} · {c.contents.memoryKeys} memory keys, {c.contents.skills} skills, {c.contents.schedules} schedules
                {c.expiresAt ? ` · kept until ${formatDate(c.expiresAt)}` : ''}
              </p>
            </div>
            <div class="row">
              <button type="button" class="secondary" onClick={() => (restoring.value = c)}>
                Restore <span class="visually-hidden">checkpoint {c.name}</span>
              </button>
              <ActionButton
                class="secondary"
                onAction={async () => {
                  failure.value = note.value = undefined;
                  const { data, error, response } = await api.POST('/api/agents/{id}/checkpoints/{checkpointId}/clone', {
                    params: { path: { id: agentId, checkpointId: c.id } },
                    body: {},
                  });
                  if (!data) return void (failure.value = explainError(response.status, error));
                  navigate(`/agents/${encodeURIComponent(data.agent.id)}`);
                }}
              >
                Clone <span class="visually-hidden">checkpoint {c.name} into a new agent</span>
              </ActionButton>
              <ActionButton
                class="danger"
                onAction={async () => {
                  const { response, error } = await api.DELETE('/api/agents/{id}/checkpoints/{checkpointId}', {
                    params: { path: { id: agentId, checkpointId: c.id } },
                  });
                  failure.value = response.ok ? undefined : explainError(response.status, error);
                  await load();
                }}
              >
                Delete <span class="visually-hidden">checkpoint {c.name}</span>
              </ActionButton>
            </div>
          </div>
        )}
      />
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          failure.value = note.value = undefined;
          const { response, error } = await api.POST('/api/agents/{id}/checkpoints', {
            params: { path: { id: agentId } },
            body: { name: name.value },
          });
          if (!response.ok) return void (failure.value = explainError(response.status, error));
          note.value = 'Checkpoint created.';
          name.value = '';
          await load();
        }}
      >
        <h3>New checkpoint</h3>
        <Field label="Name" required value={name.value} onValue={(v) => (name.value = v)} maxLength={100} />
        <button type="submit">Create checkpoint</button>
      </form>
      <Notice kind="ok" message={note.value} />
      <ErrorNotice error={failure.value} />
      <ConfirmDialog
        open={!!restoring.value}
        title="Restore this checkpoint?"
        confirmLabel="Restore"
        onCancel={() => (restoring.value = undefined)}
        onConfirm={() => {
          const c = restoring.value!;
          restoring.value = undefined;
          void restore(c);
        }}
      >
        <p>
          The agent’s memory and configuration go back to “{restoring.value?.name}” as of {formatDate(restoring.value?.createdAt)}. What changed since is kept
          as an automatic checkpoint, so you can undo this.
        </p>
      </ConfirmDialog>
    </div>
  );
}

type AgentBudget = Answer<'getAgentBudget'>['budget'];

/** The agent's monthly spending cap and what it has spent this month. */
function Budget({ agentId }: { agentId: string }) {
  const budget = useSignal<AgentBudget | undefined>(undefined);
  const cap = useSignal('');
  const failure = useSignal<ExplainedError | undefined>(undefined);
  const note = useSignal<string | undefined>(undefined);
  const load = async () => {
    const { data, error, response } = await api.GET('/api/agents/{id}/budget', { params: { path: { id: agentId } } });
    if (!data) failure.value = explainError(response.status, error);
    budget.value = data?.budget;
    cap.value = data?.budget.monthlyCapUsd == null ? '' : String(data.budget.monthlyCapUsd);
  };
  useEffect(() => void load(), [agentId]);
  const b = budget.value;
  return (
    <div class="panel">
      <h2>Budget</h2>
      {!b ? (
        !failure.value && <p role="status">Loading…</p>
      ) : (
        <dl class="facts">
          <dt>Spent in {b.month}</dt>
          <dd data-testid="budget-spent">{formatMoney(b.spentUsd, 'USD')}</dd>
          <dt>Monthly cap</dt>
          <dd>{b.monthlyCapUsd == null ? 'No cap' : formatMoney(b.monthlyCapUsd, 'USD')}</dd>
          <dt>State</dt>
          <dd>
            {b.paused
              ? 'Paused: the cap is reached'
              : b.status === 'warning'
                ? 'Over 80 % of the cap'
                : b.status === 'exceeded'
                  ? 'Cap reached'
                  : 'Within the cap'}
          </dd>
        </dl>
      )}
      <form
        class="inline-form"
        onSubmit={async (event) => {
          event.preventDefault();
          failure.value = undefined;
          note.value = undefined;
          const monthlyCapUsd = cap.value.trim() === '' ? null : Number(cap.value);
          if (monthlyCapUsd !== null && !(monthlyCapUsd >= 0)) return void (failure.value = { text: 'The cap is an amount in US dollars, like 20.' });
          const { response, error } = await api.PUT('/api/agents/{id}/budget', { params: { path: { id: agentId } }, body: { monthlyCapUsd } });
          if (!response.ok) return void (failure.value = explainError(response.status, error));
          note.value = monthlyCapUsd === null ? 'Cap removed.' : 'Cap saved.';
          await load();
        }}
      >
        <Field label="Monthly cap (USD)" type="number" hint="Leave empty for no cap." value={cap.value} onValue={(v) => (cap.value = v)} />
        <button type="submit">Save cap</button>
      </form>
      <Notice kind="ok" message={note.value} />
      <ErrorNotice error={failure.value} />
    </div>
  );
}

type AgentConfig = Schemas['AgentConfig'];

/** The agent's configuration: its instructions and model, stored and delivered to the running instance. */
function AgentSettings({ agentId }: { agentId: string }) {
  const config = useSignal<AgentConfig | undefined>(undefined);
  const systemPrompt = useSignal('');
  const model = useSignal('');
  const failure = useSignal<ExplainedError | undefined>(undefined);
  const note = useSignal<string | undefined>(undefined);
  useEffect(() => {
    void api.GET('/api/agents/{id}/config', { params: { path: { id: agentId } } }).then(({ data }) => {
      config.value = data?.config ?? {};
      systemPrompt.value = data?.config.systemPrompt ?? '';
      model.value = data?.config.model ?? '';
    });
  }, [agentId]);
  if (!config.value) return <p role="status">Loading…</p>;
  return (
    <form
      class="panel"
      onSubmit={async (event) => {
        event.preventDefault();
        failure.value = undefined;
        note.value = undefined;
        const { systemPrompt: _p, model: _m, ...kept } = config.value!;
        const body: AgentConfig = {
          ...kept,
          ...(systemPrompt.value ? { systemPrompt: systemPrompt.value } : {}),
          ...(model.value ? { model: model.value } : {}),
        };
        const { response, error } = await api.PUT('/api/agents/{id}/config', { params: { path: { id: agentId } }, body });
        if (!response.ok) return void (failure.value = explainError(response.status, error));
        config.value = body;
        note.value = 'Saved: the running agent uses it now.';
      }}
    >
      <h2>Settings</h2>
      <TextArea label="Instructions (system prompt)" value={systemPrompt.value} onValue={(v) => (systemPrompt.value = v)} rows={5} />
      <Field label="Model" hint="Empty for the platform's default model." value={model.value} onValue={(v) => (model.value = v)} />
      <button type="submit">Save settings</button>
      <Notice kind="ok" message={note.value} />
      <ErrorNotice error={failure.value} />
      <p class="hint">
        To delete the agent, use <strong>Delete agent</strong> above. Skills are installed from the{' '}
        <Link href={`/marketplace?agent=${encodeURIComponent(agentId)}`}>marketplace</Link>.
      </p>
    </form>
  );
}

/**
 * Chat with the agent. The answer streams in over the agent's own websocket through the edge when
 * it is open (`delta` frames, then `done`), or else as server-sent events from `POST /api/chat` with
 * `stream: true`, which also wakes an instance stopped for idleness. Either way the runtime stores the exchange
 * in the agent's history.
 */
function Chat({ agentId, websocketUrl, onStart }: { agentId: string; websocketUrl?: string; onStart: () => Promise<unknown> }) {
  const messages = useSignal<{ role: 'user' | 'assistant'; content: string }[]>([]);
  const loaded = useSignal(false);
  const older = useSignal<string | null>(null);
  const draft = useSignal('');
  const failure = useSignal<ExplainedError | undefined>(undefined);
  const streaming = useSignal(false);
  const direct = useSignal(false);
  const socket = useRef<ReturnType<typeof agentSocket> | undefined>(undefined);
  /** The stored history (the runtime keeps every exchange), newest first from the API, shown oldest first. */
  const loadHistory = async (before?: string) => {
    const { data } = await api.GET('/api/chat', { params: { query: { agentId, limit: 50, ...(before ? { before } : {}) } } });
    const page = (data?.messages ?? [])
      .filter((m) => m.role !== 'system')
      .map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content }))
      .reverse();
    messages.value = before ? [...page, ...messages.value] : page;
    older.value = data?.hasMore ? data.nextBefore : null;
    loaded.value = true;
  };
  useEffect(() => void loadHistory(), [agentId]);
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
          failure.value = explainError(502, body);
          resolve(true);
        },
        cut: () => {
          failure.value = { text: CUT_OFF };
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
      failure.value = explainError(response.status, error ?? (await response.json().catch(() => undefined)));
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
        failure.value = explainError(502, JSON.parse(data));
        ended = true;
      }
    });
    if (!ended) failure.value = { text: CUT_OFF };
  };

  return (
    <div class="panel">
      <h2>Chat</h2>
      <p class="hint" data-testid="chat-transport">
        {direct.value ? 'Connected to the agent’s websocket.' : 'Through the platform (the agent’s websocket is not open).'}
      </p>
      {older.value && (
        <ActionButton class="secondary" onAction={() => loadHistory(older.value!)}>
          Earlier messages
        </ActionButton>
      )}
      {loaded.value && messages.value.length === 0 && <p class="empty">No messages yet: say hello below.</p>}
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
          if (!draft.value.trim() || streaming.value || !loaded.value) return;
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
        <button type="submit" disabled={streaming.value || !loaded.value}>
          {streaming.value ? 'Answering…' : 'Send'}
        </button>
      </form>
      <ErrorNotice error={failure.value} onStart={onStart} />
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
  const failure = useSignal<ExplainedError | undefined>(undefined);
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
      <ItemList
        label="Installed skills"
        items={skills.value}
        empty="No skills yet: install one from the marketplace."
        keyOf={(s) => s.skillId}
        render={(s) => (
          <div class="item">
            <span>
              {s.skillId} {s.enabled ? '' : '(disabled)'}
            </span>
            <ActionButton
              class="danger"
              onAction={async () => {
                const { response, error } = await api.DELETE('/api/agents/{agentId}/skills/{skillId}', { params: { path: { agentId, skillId: s.skillId } } });
                if (!response.ok) failure.value = explainError(response.status, error);
                await load();
              }}
            >
              Uninstall <span class="visually-hidden">{s.skillId}</span>
            </ActionButton>
          </div>
        )}
      />
      <ErrorNotice error={failure.value} />
    </div>
  );
}
