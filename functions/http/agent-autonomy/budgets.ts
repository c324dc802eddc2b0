import { resumeIfUnderCap, WARNING_SHARE } from '#domain/ai/budget-guard';
import { ACCOUNT_SCOPE, agentScope, deleteBudgetCap, getBudgetCap, getSpend, putBudgetCap, utcMonth } from '#data/budgets';
import { getAgent } from '#data/agents';
import { getInstance } from '#data/instances';
import { notFound } from '#platform/errors';

/** Budgets: the caps' routes; the check itself lives in the metering (domain/ai/metering.ts). */

async function view(userId: string, agentId: string | undefined, paused: boolean) {
  const scope = agentId ? agentScope(agentId) : ACCOUNT_SCOPE;
  const [cap, spend] = await Promise.all([getBudgetCap(userId, scope), getSpend(userId, scope)]);
  const monthlyCapUsd = cap?.monthlyCapUsd ?? null;
  const status =
    monthlyCapUsd === null ? 'ok' : spend.spentUsd >= monthlyCapUsd ? 'exceeded' : spend.spentUsd >= monthlyCapUsd * WARNING_SHARE ? 'warning' : 'ok';
  return {
    scope: agentId ? ('agent' as const) : ('account' as const),
    ...(agentId ? { agentId } : {}),
    monthlyCapUsd,
    month: utcMonth(),
    spentUsd: spend.spentUsd,
    status: status as 'ok' | 'warning' | 'exceeded',
    paused,
  };
}

async function ownedAgent(userId: string, agentId: string) {
  const agent = await getAgent(userId, agentId, true);
  if (!agent) throw notFound('no such agent');
  return agent;
}

const accountPaused = async (userId: string) => (await getInstance(userId))?.stopReason === 'budget';

export async function accountBudget(userId: string) {
  return { budget: await view(userId, undefined, await accountPaused(userId)) };
}

export async function agentBudget(userId: string, agentId: string) {
  const agent = await ownedAgent(userId, agentId);
  return { budget: await view(userId, agentId, agent.pausedReason === 'budget') };
}

async function setCap(userId: string, scope: string, monthlyCapUsd: number | null) {
  if (monthlyCapUsd === null) await deleteBudgetCap(userId, scope);
  else await putBudgetCap(userId, scope, monthlyCapUsd);
  return resumeIfUnderCap(userId, scope, monthlyCapUsd ?? undefined);
}

export async function setAccountBudget(userId: string, monthlyCapUsd: number | null) {
  const resumed = await setCap(userId, ACCOUNT_SCOPE, monthlyCapUsd);
  return { ...(await accountBudget(userId)), resumed };
}

export async function setAgentBudget(userId: string, agentId: string, monthlyCapUsd: number | null) {
  await ownedAgent(userId, agentId);
  const resumed = await setCap(userId, agentScope(agentId), monthlyCapUsd);
  return { ...(await agentBudget(userId, agentId)), resumed };
}
