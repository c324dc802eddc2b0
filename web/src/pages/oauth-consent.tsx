import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { type Answer, api } from '../api';
import { currentUrl } from '../router';
import { Notice, PageTitle } from '../ui';

/** What each scope lets the client do, in the words a person decides on. */
const SCOPE_TEXT: Record<string, string> = {
  read: 'See your agents, their memory, history, logs, skills, schedules and webhook endpoints',
  agents:
    'Provision, start, stop, restart, repair and reset your agents, chat with them, write their memory, install and call skills, manage schedules and webhooks',
  billing: 'Read your usage and set spending budgets',
};

const FIELDS = ['client_id', 'redirect_uri', 'response_type', 'code_challenge', 'code_challenge_method', 'scope', 'state', 'resource'] as const;

/**
 * The authorization endpoint of the MCP server's OAuth (contract/mcp-oauth.ts): an MCP client sends
 * the person here; signed in, they see the client and the scopes it asks for and Allow or Deny. Either
 * way the browser goes back to the client's registered redirect URI, with a code or `access_denied`.
 */
export function OAuthConsent() {
  const request = Object.fromEntries(
    FIELDS.flatMap((f) => (currentUrl.value.searchParams.has(f) ? [[f, currentUrl.value.searchParams.get(f)!]] : [])),
  ) as Record<(typeof FIELDS)[number], string>;
  const asked = useSignal<Answer<'getOAuthAuthorization'> | undefined>(undefined);
  const problem = useSignal<string | undefined>(undefined);
  const busy = useSignal(false);
  useEffect(() => {
    void (async () => {
      const { data, error } = await api.GET('/api/oauth/authorize', { params: { query: request } });
      if (data) asked.value = data;
      else
        problem.value = (error as { error_description?: string; error?: string } | undefined)?.error_description ?? 'This authorization request is not valid.';
    })();
  }, []);
  const decide = async (decision: 'allow' | 'deny') => {
    busy.value = true;
    const { data, error } = await api.POST('/api/oauth/authorize', { body: { ...request, decision } });
    if (data) location.assign(data.redirect);
    else {
      busy.value = false;
      problem.value = (error as { error_description?: string } | undefined)?.error_description ?? 'The decision could not be recorded.';
    }
  };
  if (problem.value)
    return (
      <section>
        <PageTitle>Authorization failed</PageTitle>
        <Notice kind="error" message={problem.value} />
      </section>
    );
  if (!asked.value) return <p aria-busy="true">Checking the request…</p>;
  return (
    <section class="panel consent">
      <PageTitle>Connect {asked.value.clientName}?</PageTitle>
      <p>
        <strong>{asked.value.clientName}</strong> asks to use your agent platform account through its MCP server. It will be able to:
      </p>
      <ul aria-label="Requested access">
        {asked.value.scopes.map((scope) => (
          <li key={scope}>
            <strong>{scope}</strong>: {SCOPE_TEXT[scope] ?? scope}
          </li>
        ))}
      </ul>
      <p class="hint">
        You will be returned to <code>{new URL(asked.value.redirectUri).origin}</code>. You can revoke this at any time in Settings.
      </p>
      <div class="row">
        <button type="button" disabled={busy.value} onClick={() => decide('allow')}>
          Allow
        </button>
        <button type="button" class="secondary" disabled={busy.value} onClick={() => decide('deny')}>
          Deny
        </button>
      </div>
    </section>
  );
}
