import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from '../api';
import { type ExplainedError, explainError } from '../errors';
import { followInstance } from '../live';
import { localMailUrl } from '../local-mode';
import { Link } from '../router';
import { type AgentListItem, listAgents, me } from '../state';
import { ActionButton, ErrorNotice, Field, formatDate, Notice, PageTitle } from '../ui';

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

/** The user's agents, with live status: a provisioning agent turns `running` (or `error`) in place. */
export function Dashboard() {
  const agents = useSignal<AgentListItem[] | undefined>(undefined);
  const name = useSignal('');
  const failure = useSignal<ExplainedError | undefined>(undefined);
  const info = useSignal<string | undefined>(undefined);
  const refresh = async () => {
    agents.value = (await listAgents()) ?? [];
  };

  const pending = agents.value?.some((a) => a.status === 'provisioning') ?? false;
  useEffect(() => {
    if (!pending) return;
    let cancelled = false;
    void followInstance('running', () => cancelled).then(async (status) => {
      if (cancelled) return;
      await refresh();
      // Agents waiting for a launch join in the write that makes the instance running; one added to an
      // instance that already runs joins once the runtime has reloaded, so read again until it does.
      for (let reads = 0; !cancelled && reads < 20 && agents.value?.some((a) => a.status === 'provisioning'); reads++) {
        await new Promise((r) => setTimeout(r, 500));
        await refresh();
      }
      if (status) info.value = `Your agents' instance is ${status}.`;
    });
    return () => {
      cancelled = true;
    };
  }, [pending]);
  useEffect(() => void refresh(), []);

  return (
    <section>
      <PageTitle>Your agents</PageTitle>
      <GettingStarted agents={agents.value} />
      <form
        class="inline-form"
        onSubmit={async (event) => {
          event.preventDefault();
          failure.value = undefined;
          info.value = undefined;
          const { response, error } = await api.POST('/api/agents/provision', { body: { name: name.value } });
          if (!response.ok) {
            failure.value = explainError(response.status, error);
            return;
          }
          info.value = `Provisioning ${name.value}…`;
          name.value = '';
          await refresh();
        }}
      >
        <Field label="New agent name" required maxLength={100} value={name.value} onValue={(v) => (name.value = v)} />
        <button type="submit">Provision agent</button>
      </form>
      <ErrorNotice error={failure.value} />
      <Notice message={info.value} />
      {agents.value === undefined ? (
        <p role="status">Loading…</p>
      ) : agents.value.length === 0 ? (
        <p class="empty">No agents yet: name one above and provision it.</p>
      ) : (
        <table class="responsive">
          <caption class="visually-hidden">Agents and their status</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Model</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody aria-live="polite">
            {agents.value.map((agent) => (
              <tr key={agent.id}>
                <td>
                  <Link href={`/agents/${encodeURIComponent(agent.id)}`}>{agent.name}</Link>
                </td>
                <td>
                  <StatusBadge status={agent.status} />
                </td>
                <td>{agent.model}</td>
                <td>{formatDate(agent.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

interface Progress {
  subscribed: boolean;
  chatted: boolean;
  keyed: boolean;
}

/** What the account has done so far, read from the API (nothing is remembered in the browser). */
async function readProgress(agents: AgentListItem[]): Promise<Progress> {
  const [billing, keys, chats] = await Promise.all([
    api.GET('/api/billing'),
    api.GET('/api/keys'),
    Promise.all(agents.slice(0, 5).map((a) => api.GET('/api/chat', { params: { query: { agentId: a.id, limit: 1 } } }))),
  ]);
  return {
    subscribed: billing.data?.active === true,
    chatted: chats.some((c) => (c.data?.messages.length ?? 0) > 0),
    keyed: (keys.data?.keys.length ?? 0) > 0,
  };
}

/** The first steps, each ticked from the account's real state, with the way to do the next one. */
function GettingStarted({ agents }: { agents: AgentListItem[] | undefined }) {
  const progress = useSignal<Progress | undefined>(undefined);
  const resent = useSignal<string | undefined>(undefined);
  const statuses = agents?.map((a) => a.status).join() ?? '';
  useEffect(() => {
    if (agents) void readProgress(agents).then((p) => (progress.value = p));
  }, [agents?.length, statuses]);
  const p = progress.value;
  if (!p || !agents) return null;
  const first = agents[0];
  const steps = [
    {
      id: 'confirm',
      done: (me.value as { emailVerified?: boolean } | null | undefined)?.emailVerified === true,
      title: 'Confirm your email address',
      detail: (
        <>
          Open the confirmation link we sent to {me.value?.email}.{' '}
          {localMailUrl.value && (
            <a href={localMailUrl.value} class="button secondary">
              Open the local mailbox
            </a>
          )}{' '}
          <ActionButton
            class="secondary"
            onAction={async () => {
              const { response, error } = await api.POST('/api/auth/verify-email/resend');
              resent.value = response.ok ? 'Sent again: check your mailbox.' : explainError(response.status, error).text;
            }}
          >
            Send the link again
          </ActionButton>
          {resent.value && <span role="status"> {resent.value}</span>}
        </>
      ),
    },
    {
      id: 'subscribe',
      done: p.subscribed,
      title: 'Choose a plan',
      detail: (
        <Link href="/settings/billing" class="button secondary">
          See the plans
        </Link>
      ),
    },
    { id: 'provision', done: agents.length > 0, title: 'Provision your first agent', detail: <span>Name it in the form below.</span> },
    {
      id: 'chat',
      done: p.chatted,
      title: 'Chat with it',
      detail: first ? (
        <Link href={`/agents/${encodeURIComponent(first.id)}?tab=chat`} class="button secondary">
          Open the chat
        </Link>
      ) : (
        <span>Once it runs.</span>
      ),
    },
    {
      id: 'key',
      done: p.keyed,
      title: 'Create an API key',
      detail: (
        <Link href="/keys" class="button secondary">
          Create a key
        </Link>
      ),
    },
  ];
  const left = steps.filter((s) => !s.done).length;
  if (left === 0) return null;
  const next = steps.find((s) => !s.done)!;
  return (
    <section class="panel checklist" aria-labelledby="getting-started">
      <h2 id="getting-started">Getting started</h2>
      <p class="hint">
        {steps.length - left} of {steps.length} done.
      </p>
      <ol>
        {steps.map((s) => (
          <li key={s.id} class={s.done ? 'done' : s === next ? 'next' : undefined} data-step={s.id}>
            <span class="tick" aria-hidden="true">
              {s.done ? '✓' : ''}
            </span>
            <div>
              <strong>{s.title}</strong>
              <span class="visually-hidden">{s.done ? ' (done)' : ' (to do)'}</span>
              {!s.done && <div class="step-detail">{s.detail}</div>}
            </div>
          </li>
        ))}
      </ol>
    </section>
  );
}
