import { CHANNEL_APPS } from '#adapters/channels';
import { listAgents } from '#data/agents';
import { listSchedules } from '#data/schedules';
import { getConnection } from '#data/skills/channels';
import { listUserWebhooks } from '#data/user-webhooks';

/**
 * What keeps acting for an account after its credentials are revoked: webhook endpoints (where its
 * events go), schedules and agent prompts (what its agents do unasked) and channel connections
 * (where they speak). An intruder who got in may have set any of them up, so a recovery names them
 * all for the owner to check.
 */
export async function recoveryInventory(userId: string): Promise<string[]> {
  const [endpoints, agents, connections] = await Promise.all([
    listUserWebhooks(userId),
    listAgents(userId, true),
    Promise.all(CHANNEL_APPS.map((app) => getConnection(userId, app))),
  ]);
  const schedules = (await Promise.all(agents.map((a) => listSchedules(userId, a.id)))).flat();
  const clip = (text: string) => (text.length > 80 ? `${text.slice(0, 80)}…` : text);
  return [
    // The host only: a receiver URL may carry a token in its path or query.
    ...endpoints.map((e) => `webhook endpoint ${e.id} (${new URL(e.url).host})`),
    ...schedules.map((s) => `schedule of agent ${s.agentId} (${s.cron ?? s.at}): "${clip(s.prompt)}"`),
    ...agents.flatMap((a) => {
      const prompt = (a.config as { systemPrompt?: unknown } | undefined)?.systemPrompt;
      return typeof prompt === 'string' && prompt ? [`prompt of agent ${a.name} (${a.id}): "${clip(prompt)}"`] : [];
    }),
    ...connections.flatMap((c) => (c ? [`channel connection ${c.app}${c.agentId ? ` (agent ${c.agentId})` : ''}`] : [])),
  ];
}
