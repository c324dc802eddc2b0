import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { type Answer, api } from '../api';
import { describeError } from '../errors';
import { ActionButton, CopyButton, Field, formatDate, Notice, PageTitle } from '../ui';

/** API keys: the key is shown once, at creation, with a copy button; afterwards only its preview. */
export function ApiKeys() {
  const keys = useSignal<Answer<'listApiKeys'>['keys'] | undefined>(undefined);
  const name = useSignal('');
  const created = useSignal<{ name: string; key: string } | undefined>(undefined);
  const failure = useSignal<string | undefined>(undefined);
  const load = async () => {
    const { data } = await api.GET('/api/keys');
    keys.value = data?.keys ?? [];
  };
  useEffect(() => void load(), []);
  return (
    <section>
      <PageTitle>API keys</PageTitle>
      <p>
        A key lets a program call the API as you: send it as <code>Authorization: Bearer sk_…</code>. It is shown once, when you create it.
      </p>
      <form
        class="inline-form"
        onSubmit={async (event) => {
          event.preventDefault();
          failure.value = undefined;
          const { data, error, response } = await api.POST('/api/keys', { body: { name: name.value } });
          if (!data) return void (failure.value = describeError(response.status, error));
          created.value = { name: data.name, key: data.key };
          name.value = '';
          await load();
        }}
      >
        <Field label="Key name" required maxLength={64} value={name.value} onValue={(v) => (name.value = v)} />
        <button type="submit">Create key</button>
      </form>
      <Notice kind="error" message={failure.value} />
      {created.value && (
        <div class="panel" role="status">
          <p>
            Your new key <strong>{created.value.name}</strong> (shown only now):
          </p>
          <div class="row">
            <code class="secret" data-testid="new-key">
              {created.value.key}
            </code>
            <CopyButton value={created.value.key} label="Copy key" />
          </div>
        </div>
      )}
      {keys.value?.length === 0 && <p class="empty">No API keys yet: name one above to create it.</p>}
      {keys.value && keys.value.length > 0 && (
        <table class="responsive">
          <caption class="visually-hidden">Your API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.value.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.keyPreview}</code>
                </td>
                <td>{formatDate(k.createdAt)}</td>
                <td>{formatDate(k.lastUsed)}</td>
                <td>
                  <ActionButton
                    class="danger"
                    onAction={async () => {
                      if (!confirm(`Revoke the key "${k.name}"? Programs using it stop working.`)) return;
                      await api.DELETE('/api/keys/{id}', { params: { path: { id: k.id } } });
                      await load();
                    }}
                  >
                    Revoke <span class="visually-hidden">{k.name}</span>
                  </ActionButton>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
