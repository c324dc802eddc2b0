import { useSignal } from '@preact/signals';
import { useEffect, useId } from 'preact/hooks';
import type { operations } from '../../../clients/typescript';
import { type Answer, api } from '../api';
import { describeError } from '../errors';
import { currentUrl } from '../router';
import { type AgentListItem, listAgents } from '../state';
import { ActionButton, Notice, PageTitle } from '../ui';

type Category = NonNullable<NonNullable<operations['listSkills']['parameters']['query']>['category']>;

/** The skills marketplace: browse, filter by category, install on one of the user's agents. */
export function Marketplace() {
  const skills = useSignal<Answer<'listSkills'>['skills'] | undefined>(undefined);
  const categories = useSignal<string[]>([]);
  const category = useSignal<string>('all');
  const agents = useSignal<AgentListItem[]>([]);
  const agentId = useSignal(currentUrl.value.searchParams.get('agent') ?? '');
  const note = useSignal<{ kind: 'ok' | 'error'; text: string } | undefined>(undefined);
  const categoryId = useId();
  const agentFieldId = useId();

  useEffect(() => {
    void api.GET('/api/skills', { params: { query: { category: category.value as Category } } }).then(({ data }) => {
      skills.value = data?.skills ?? [];
      if (data && categories.value.length === 0) categories.value = data.categories;
    });
  }, [category.value]);
  useEffect(() => {
    void listAgents().then((list) => {
      agents.value = list ?? [];
      if (!agentId.value && list?.[0]) agentId.value = list[0].id;
    });
  }, []);

  return (
    <section>
      <PageTitle>Skills marketplace</PageTitle>
      <div class="row">
        <div class="field">
          <label for={categoryId}>Category</label>
          <select id={categoryId} value={category.value} onChange={(e) => (category.value = e.currentTarget.value)}>
            <option value="all">All categories</option>
            {categories.value.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for={agentFieldId}>Install on</label>
          <select id={agentFieldId} value={agentId.value} onChange={(e) => (agentId.value = e.currentTarget.value)}>
            {agents.value.length === 0 && <option value="">No agents yet</option>}
            {agents.value.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </div>
      </div>
      <Notice kind={note.value?.kind} message={note.value?.text} />
      {skills.value === undefined ? (
        <p role="status">Loading…</p>
      ) : (
        <ul class="grid" aria-label="Skills">
          {skills.value.map((skill) => (
            <li key={skill.id} class="panel">
              <h2>{skill.name}</h2>
              <p>{skill.description}</p>
              <p class="hint">
                {skill.category} · by {skill.author} · {skill.downloads} installs · rated {skill.rating}
                {skill.featured ? ' · featured' : ''}
              </p>
              <ActionButton
                class="secondary"
                onAction={async () => {
                  if (!agentId.value) return void (note.value = { kind: 'error', text: 'Provision an agent first: skills are installed on an agent.' });
                  const { response, error } = await api.POST('/api/skills', { body: { skillId: skill.id, agentId: agentId.value } });
                  note.value = response.ok ? { kind: 'ok', text: `${skill.name} installed.` } : { kind: 'error', text: describeError(response.status, error) };
                }}
              >
                Install <span class="visually-hidden">{skill.name}</span>
              </ActionButton>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
