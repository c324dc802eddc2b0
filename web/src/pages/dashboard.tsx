import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, describeError } from '../api';
import { followInstance } from '../live';
import { Link } from '../router';
import { type AgentListItem, listAgents } from '../state';
import { Field, formatDate, Notice, PageTitle } from '../ui';

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

/** The user's agents, with live status: a provisioning agent turns `running` (or `error`) in place. */
export function Dashboard() {
  const agents = useSignal<AgentListItem[] | undefined>(undefined);
  const name = useSignal('');
  const failure = useSignal<string | undefined>(undefined);
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
      <form
        class="inline-form"
        onSubmit={async (event) => {
          event.preventDefault();
          failure.value = undefined;
          info.value = undefined;
          const { response, error } = await api.POST('/api/agents/provision', { body: { name: name.value } });
          if (!response.ok) {
            failure.value = describeError(response.status, error);
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
      <Notice kind="error" message={failure.value} />
      {failure.value?.includes('subscription') && (
        <p>
          <Link href="/settings/billing">Choose a plan</Link>
        </p>
      )}
      <Notice message={info.value} />
      {agents.value === undefined ? (
        <p role="status">Loading…</p>
      ) : agents.value.length === 0 ? (
        <p>No agents yet: name one above and provision it.</p>
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
