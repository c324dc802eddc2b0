import { api } from './api';
import { me } from './state';

const SETTLED = new Set(['running', 'stopped', 'error']);

/**
 * Follows the account's instance until it settles: each call is `waitFor`, held by the server
 * until the status changes or its longest hold (MAX_WAIT_SECONDS in contract/instance.ts) passes,
 * so the page learns the change as it happens without polling. Answers the settled status (or
 * undefined when `isCancelled`).
 */
export async function followInstance(target: 'running' | 'stopped', isCancelled: () => boolean): Promise<string | undefined> {
  const userId = me.value?.id;
  if (!userId) return undefined;
  while (!isCancelled()) {
    const { data, response } = await api.GET('/api/instance/{userId}', { params: { path: { userId }, query: { waitFor: target, timeout: 25 } } });
    if (!data) {
      if (response.status === 404) return undefined;
      await new Promise((r) => setTimeout(r, 2000));
      continue;
    }
    if (data.reached || SETTLED.has(data.status)) return data.status;
  }
  return undefined;
}
