import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { type Answer, api } from '../api';
import { describeError } from '../errors';
import { loadSession, me } from '../state';
import { ActionButton, CopyButton, Field, formatDate, ItemList, Notice, PageTitle } from '../ui';

type Note = { kind: 'ok' | 'error'; text: string } | undefined;
const noteOf = (ok: boolean, status: number, error: unknown, success: string): Note =>
  ok ? { kind: 'ok', text: success } : { kind: 'error', text: describeError(status, error) };

const NOTIFICATIONS = [
  { key: 'email', label: 'Account and security email' },
  { key: 'agentStatus', label: 'Agent status changes' },
  { key: 'billing', label: 'Receipts and billing' },
  { key: 'productUpdates', label: 'Product updates' },
] as const;

export function SettingsPage() {
  return (
    <section>
      <PageTitle>Settings</PageTitle>
      <Profile />
      <Password />
      <SignOutEverywhere />
      <Notifications />
      <WebhookEndpoints />
      <ConnectedClients />
      <RemoveStandingSetup />
    </section>
  );
}

function Profile() {
  const name = useSignal(me.value?.name ?? '');
  const email = useSignal(me.value?.email ?? '');
  const note = useSignal<Note>(undefined);
  return (
    <form
      class="panel"
      onSubmit={async (event) => {
        event.preventDefault();
        const { response, error } = await api.POST('/api/settings', { body: { name: name.value, email: email.value } });
        note.value = noteOf(
          response.ok,
          response.status,
          error,
          email.value !== me.value?.email ? 'Saved: confirm the new address from the email we sent.' : 'Saved.',
        );
        if (response.ok) await loadSession();
      }}
    >
      <h2>Profile</h2>
      <Field label="Name" autoComplete="name" value={name.value} onValue={(v) => (name.value = v)} />
      <Field label="Email" type="email" autoComplete="email" required value={email.value} onValue={(v) => (email.value = v)} />
      <button type="submit">Save profile</button>
      <Notice kind={note.value?.kind} message={note.value?.text} />
    </form>
  );
}

/** Checked by default: a credential an intruder may hold is revoked unless the owner keeps it on purpose. */
function RevokeApiKeys({ id, checked, onValue }: { id: string; checked: boolean; onValue: (v: boolean) => void }) {
  return (
    <div class="check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onValue(e.currentTarget.checked)} />
      <label for={id}>Also revoke API keys</label>
    </div>
  );
}

function Password() {
  const current = useSignal('');
  const next = useSignal('');
  const revokeApiKeys = useSignal(true);
  const note = useSignal<Note>(undefined);
  return (
    <form
      class="panel"
      onSubmit={async (event) => {
        event.preventDefault();
        const { response, error } = await api.POST('/api/settings/password', {
          body: { currentPassword: current.value, newPassword: next.value, revokeApiKeys: revokeApiKeys.value },
        });
        note.value = noteOf(response.ok, response.status, error, 'Password changed.');
        if (response.ok) current.value = next.value = '';
      }}
    >
      <h2>Password</h2>
      <Field label="Current password" type="password" autoComplete="current-password" required value={current.value} onValue={(v) => (current.value = v)} />
      <Field
        label="New password"
        type="password"
        autoComplete="new-password"
        minLength={8}
        required
        hint="At least 8 characters."
        value={next.value}
        onValue={(v) => (next.value = v)}
      />
      <RevokeApiKeys id="password-revoke-api-keys" checked={revokeApiKeys.value} onValue={(v) => (revokeApiKeys.value = v)} />
      <button type="submit">Change password</button>
      <Notice kind={note.value?.kind} message={note.value?.text} />
    </form>
  );
}

function SignOutEverywhere() {
  const revokeApiKeys = useSignal(true);
  const note = useSignal<Note>(undefined);
  return (
    <form
      class="panel"
      onSubmit={async (event) => {
        event.preventDefault();
        const { response, error } = await api.POST('/api/auth/signout', {
          params: { query: { everywhere: 'true' } },
          body: { revokeApiKeys: revokeApiKeys.value },
        });
        note.value = noteOf(response.ok, response.status, error, 'Signed out everywhere.');
        if (response.ok) await loadSession();
      }}
    >
      <h2>Sign out everywhere</h2>
      <p class="hint">Ends every session of your account, this one included, and replaces your agents' instance token.</p>
      <RevokeApiKeys id="signout-revoke-api-keys" checked={revokeApiKeys.value} onValue={(v) => (revokeApiKeys.value = v)} />
      <button type="submit">Sign out everywhere</button>
      <Notice kind={note.value?.kind} message={note.value?.text} />
    </form>
  );
}

function Notifications() {
  const note = useSignal<Note>(undefined);
  const prefs = (me.value as { notifications?: Record<string, boolean> } | null)?.notifications ?? {};
  return (
    <fieldset class="panel">
      <legend>Notifications</legend>
      {NOTIFICATIONS.map(({ key, label }) => (
        <div key={key} class="check">
          <input
            id={`notify-${key}`}
            type="checkbox"
            checked={prefs[key] ?? false}
            onChange={async (e) => {
              const { response, error } = await api.PATCH('/api/settings', { body: { notifications: { [key]: e.currentTarget.checked } } });
              note.value = noteOf(response.ok, response.status, error, 'Preferences saved.');
              await loadSession();
            }}
          />
          <label for={`notify-${key}`}>{label}</label>
        </div>
      ))}
      <Notice kind={note.value?.kind} message={note.value?.text} />
    </fieldset>
  );
}

type Endpoint = Answer<'listWebhookEndpoints'>['endpoints'][number];

function WebhookEndpoints() {
  const endpoints = useSignal<Endpoint[] | undefined>(undefined);
  const url = useSignal('');
  const secret = useSignal<string | undefined>(undefined);
  const note = useSignal<Note>(undefined);
  const load = async () => {
    endpoints.value = (await api.GET('/api/webhooks/endpoints')).data?.endpoints ?? [];
  };
  useEffect(() => void load(), []);
  return (
    <div class="panel">
      <h2>Webhook endpoints</h2>
      <p class="hint">Your agents' lifecycle events (instance.*, agent.*) are POSTed to these URLs, signed with the endpoint's secret.</p>
      <form
        class="inline-form"
        onSubmit={async (event) => {
          event.preventDefault();
          const { data, error, response } = await api.POST('/api/webhooks/endpoints', { body: { url: url.value } });
          note.value = noteOf(response.ok, response.status, error, 'Endpoint added.');
          if (data) {
            secret.value = data.secret;
            url.value = '';
            await load();
          }
        }}
      >
        <Field label="Endpoint URL" type="url" required placeholder="https://hooks.example.com/agents" value={url.value} onValue={(v) => (url.value = v)} />
        <button type="submit">Add endpoint</button>
      </form>
      {secret.value && (
        <div class="row" role="status">
          <span>Signing secret (shown once):</span>
          <code class="secret">{secret.value}</code>
          <CopyButton value={secret.value} label="Copy secret" />
        </div>
      )}
      <Notice kind={note.value?.kind} message={note.value?.text} />
      <ItemList
        label="Webhook endpoints"
        items={endpoints.value}
        empty="No endpoints yet."
        keyOf={(e) => e.id}
        render={(e) => (
          <div>
            <div class="item">
              <div>
                <code>{e.url}</code>
                <p class="hint">
                  {e.enabled ? 'Enabled' : `Disabled${e.disabledReason ? ` (${e.disabledReason})` : ''}`} · {e.events.join(', ')} · added{' '}
                  {formatDate(e.createdAt)}
                </p>
              </div>
              <ActionButton
                class="danger"
                onAction={async () => {
                  await api.DELETE('/api/webhooks/endpoints/{id}', { params: { path: { id: e.id } } });
                  await load();
                }}
              >
                Remove <span class="visually-hidden">{e.url}</span>
              </ActionButton>
            </div>
            <Deliveries endpoint={e} />
          </div>
        )}
      />
    </div>
  );
}

type Delivery = Answer<'listWebhookDeliveries'>['deliveries'][number];

/** An endpoint's delivery log (opened on demand), each event with a button to send it again. */
function Deliveries({ endpoint }: { endpoint: Endpoint }) {
  const deliveries = useSignal<Delivery[] | undefined>(undefined);
  const note = useSignal<Note>(undefined);
  const load = async () => {
    deliveries.value = (await api.GET('/api/webhooks/endpoints/{id}/deliveries', { params: { path: { id: endpoint.id } } })).data?.deliveries ?? [];
  };
  return (
    <details
      class="deliveries"
      onToggle={(event) => {
        if ((event.currentTarget as HTMLDetailsElement).open && !deliveries.value) void load();
      }}
    >
      <summary>
        Delivery log <span class="visually-hidden">of {endpoint.url}</span>
      </summary>
      {deliveries.value && (
        <ItemList
          label={`Deliveries to ${endpoint.url}`}
          items={deliveries.value}
          empty="Nothing sent yet: events appear here as your agents start, stop and change."
          keyOf={(d) => `${d.eventId}-${d.attempt}-${d.at}`}
          render={(d) => (
            <div class="item">
              <div>
                <span class={`badge badge-${d.outcome === 'delivered' ? 'active' : 'error'}`}>{d.outcome}</span> <strong>{d.type}</strong>
                <p class="hint">
                  {formatDate(d.at)} · attempt {d.attempt}
                  {d.manual ? ' (sent again by hand)' : ''}
                  {d.statusCode ? ` · answered ${d.statusCode}` : ''}
                  {d.error ? ` · ${d.error}` : ''}
                  {d.nextAttemptAt ? ` · next try ${formatDate(d.nextAttemptAt)}` : ''}
                </p>
              </div>
              <ActionButton
                class="secondary"
                onAction={async () => {
                  const { response, error } = await api.POST('/api/webhooks/endpoints/{id}/deliveries/{eventId}/redeliver', {
                    params: { path: { id: endpoint.id, eventId: d.eventId } },
                  });
                  note.value = noteOf(response.ok, response.status, error, `${d.type} queued to be sent again: its outcome appears here.`);
                  if (response.ok) await load();
                }}
              >
                Redeliver <span class="visually-hidden">{d.type}</span>
              </ActionButton>
            </div>
          )}
        />
      )}
      <Notice kind={note.value?.kind} message={note.value?.text} />
    </details>
  );
}

type Connection = Answer<'listOAuthConnections'>['connections'][number];

/** The MCP clients the account authorized through OAuth (Claude connectors...), each revocable at once. */
function ConnectedClients() {
  const connections = useSignal<Connection[] | undefined>(undefined);
  const load = async () => {
    connections.value = (await api.GET('/api/oauth/connections')).data?.connections ?? [];
  };
  useEffect(() => void load(), []);
  return (
    <div class="panel">
      <h2>Connected MCP clients</h2>
      <p class="hint">Assistants you allowed to use your account through the MCP server. Revoking one stops its access at once.</p>
      <ItemList
        label="Connected MCP clients"
        items={connections.value}
        empty="No connected clients."
        keyOf={(c) => c.clientId}
        render={(c) => (
          <div class="item">
            <div>
              <strong>{c.clientName}</strong>
              <p class="hint">
                {c.scope} · connected {formatDate(c.createdAt)}
              </p>
            </div>
            <ActionButton
              class="danger"
              onAction={async () => {
                await api.DELETE('/api/oauth/connections/{clientId}', { params: { path: { clientId: c.clientId } } });
                await load();
              }}
            >
              Revoke <span class="visually-hidden">{c.clientName}</span>
            </ActionButton>
          </div>
        )}
      />
    </div>
  );
}

/** The recovery notice links here (`/settings#remove-standing-setup`). */
const STANDING_SETUP_PANEL_ID = 'remove-standing-setup';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The outcome in words: what went, or that nothing was left to remove. */
function describeRemoval(removed: Answer<'removeStandingSetup'>['removed']): string {
  const parts = [
    removed.webhookEndpoints && plural(removed.webhookEndpoints, 'webhook endpoint', 'webhook endpoints'),
    removed.schedules && plural(removed.schedules, 'schedule', 'schedules'),
    removed.channelConnections && plural(removed.channelConnections, 'channel connection', 'channel connections'),
    removed.agentPrompts && plural(removed.agentPrompts, 'agent prompt', 'agent prompts'),
  ].filter(Boolean);
  return parts.length ? `Removed ${parts.join(', ')}.` : 'Nothing was set up: nothing to remove.';
}

/**
 * After a recovery: removes in one step what acts for the account without a sign-in (an intruder may
 * have set it up), behind an explicit confirmation since it cannot be undone.
 */
function RemoveStandingSetup() {
  const confirming = useSignal(false);
  const note = useSignal<Note>(undefined);
  useEffect(() => {
    if (location.hash === `#${STANDING_SETUP_PANEL_ID}`) document.getElementById(STANDING_SETUP_PANEL_ID)?.scrollIntoView();
  }, []);
  return (
    <div class="panel" id={STANDING_SETUP_PANEL_ID}>
      <h2>Remove everything set up without you</h2>
      <p class="hint">
        Deletes every webhook endpoint, every agent schedule and every channel connection, and clears your agents' custom prompts. Use it when someone else had
        access to your account. It cannot be undone.
      </p>
      {!confirming.value && (
        <button
          type="button"
          class="danger"
          onClick={() => {
            confirming.value = true;
            note.value = undefined;
          }}
        >
          Remove everything set up without you
        </button>
      )}
      {confirming.value && (
        <fieldset class="row">
          <legend class="visually-hidden">Confirm the removal</legend>
          <span>Remove all webhook endpoints, schedules, channel connections and agent prompts?</span>
          <ActionButton
            class="danger"
            onAction={async () => {
              const { data, error, response } = await api.POST('/api/settings/recovery/remove-standing-setup', { body: {} });
              note.value = data ? { kind: 'ok', text: describeRemoval(data.removed) } : noteOf(false, response.status, error, '');
              confirming.value = false;
            }}
          >
            Yes, remove them
          </ActionButton>
          <button type="button" class="secondary" onClick={() => (confirming.value = false)}>
            Cancel
          </button>
        </fieldset>
      )}
      <Notice kind={note.value?.kind} message={note.value?.text} />
    </div>
  );
}
