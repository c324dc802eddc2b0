import { signal } from '@preact/signals';
import { api, forgetCsrf, refreshCsrf } from './api';

type Settings = NonNullable<Awaited<ReturnType<typeof loadSettings>>>;

async function loadSettings() {
  const { data } = await api.GET('/api/settings');
  return data;
}

/** The signed-in account (`GET /api/settings`), null when signed out, undefined while unknown. */
export const me = signal<Settings | null | undefined>(undefined);

export async function loadSession(): Promise<void> {
  const settings = await loadSettings().catch(() => undefined);
  me.value = settings ?? null;
  if (settings) await refreshCsrf();
}

export async function signOut(): Promise<void> {
  await api.POST('/api/auth/signout', { body: {} });
  forgetCsrf();
  me.value = null;
}

export type AgentListItem = NonNullable<Awaited<ReturnType<typeof listAgents>>>[number];

export async function listAgents() {
  const { data } = await api.GET('/api/agents');
  return data?.agents;
}
