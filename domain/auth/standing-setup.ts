import { CHANNEL_APPS } from '#adapters/channels';
import { clearAgentSystemPrompt, listAgents } from '#data/agents';
import { deleteSchedule, listSchedules } from '#data/schedules';
import { deleteConnection } from '#data/skills/channels';
import { deleteUserWebhook, listUserWebhooks } from '#data/user-webhooks';
import { pushToRunningInstance } from '#domain/instances/push';

/** How many of each kind the removal took away; a repeat finds nothing left and answers zeros. */
export interface StandingSetupRemoved {
  webhookEndpoints: number;
  schedules: number;
  channelConnections: number;
  agentPrompts: number;
}

const count = (outcomes: boolean[]) => outcomes.filter(Boolean).length;

/**
 * Takes away, in one step, everything the recovery notice lists (./recovery-inventory.ts) as acting
 * for the account without a sign-in: every webhook endpoint, every schedule, every channel
 * connection, and each agent's custom system prompt (the agent falls back to the platform's
 * default). Each removal goes through the record family's own delete, so its counts and look-ups
 * stay right; one already gone (a concurrent removal) is simply not counted.
 */
export async function removeStandingSetup(userId: string): Promise<StandingSetupRemoved> {
  const [endpoints, agents] = await Promise.all([listUserWebhooks(userId), listAgents(userId, true)]);
  const schedules = (await Promise.all(agents.map((a) => listSchedules(userId, a.id)))).flat();
  const [webhookEndpoints, removedSchedules, channelConnections, prompts] = await Promise.all([
    Promise.all(endpoints.map((e) => deleteUserWebhook(userId, e.id))),
    Promise.all(schedules.map((s) => deleteSchedule(userId, s.agentId, s.id))),
    Promise.all(CHANNEL_APPS.map((app) => deleteConnection(userId, app))),
    Promise.all(agents.map((a) => clearAgentSystemPrompt(userId, a.id))),
  ]);
  const agentPrompts = count(prompts);
  // A running instance holds the old prompt in memory until it reloads; best effort, the stored
  // configuration is what any later start reads.
  if (agentPrompts) await pushToRunningInstance(userId, '/reload', {});
  return {
    webhookEndpoints: count(webhookEndpoints),
    schedules: count(removedSchedules),
    channelConnections: count(channelConnections),
    agentPrompts,
  };
}
