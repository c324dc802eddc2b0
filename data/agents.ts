import { randomBytes, randomInt } from 'node:crypto';
import type { AgentConfig } from '#contract/agents';
import * as keys from './keys';
import { messageCountUpdate } from './metrics';
import { ConditionFailedError, queryEvery, tenant, tx, type TransactItem } from './tenant';
import { transactRetrying } from './transact-retry';
import { DomainError } from '#platform/errors';

/**
 * Agents (spec 2.3, 2.4, section 3) at `USER#<id> / AGENT#<agentId>`.
 *
 * An agent stores its own provisioning `phase`; the status a client sees is derived from it and
 * from the account's one instance (data/instances.ts), which runs every agent of the account:
 * - phase `provisioning` → status `provisioning` (waiting for its first launch);
 * - phase `error`        → status `error` (the launch failed; its quota was released);
 * - phase `ready`        → the instance's status (`running`, `stopped`, `provisioning` while it
 *   restarts, `error`).
 * So a lifecycle transition is one condition-guarded write on the instance item, however many
 * agents the account has.
 *
 * PLATFORM COUNTERS (for `GET /api/metrics`), kept in the same transactions that change agents and
 * deployments, sharded over COUNTER_SHARDS items so that unrelated accounts rarely contend:
 * - `COUNTER / agents#<shard>`: `total`, `provisioning`, `running`, `stopped`, `error`: agents by
 *   the status a client sees (`total` is their sum; `deleteAgent` takes a deleted agent out of both).
 * - `COUNTER / deployments#<shard>`: `total` (instance launches begun: first launch, start,
 *   restart, update, repair), `successful` (became healthy), `failed` (never healthy / gave up).
 * Read them with `readPlatformCounters()`, which sums the shards.
 */

export type AgentPhase = 'provisioning' | 'ready' | 'error';
export type InstanceStatus = 'provisioning' | 'running' | 'stopped' | 'error';
export type AgentStatusValue = InstanceStatus;

export interface AgentVerificationRecord {
  verificationType: 'eas' | 'coinbase' | 'ens' | 'webauthn';
  attestationUid: string | null;
  verifierAddress: string | null;
  verifiedAt: string;
  metadata: Record<string, unknown> | null;
}

export interface AgentRecord extends Record<string, unknown> {
  id: string;
  name: string;
  model: string;
  config: AgentConfig;
  phase: AgentPhase;
  /** `api` (POST /api/agents/provision) or `channels` (POST /api/provision). */
  source: 'api' | 'channels';
  createdAt: string;
  updatedAt: string;
  readyAt?: string;
  failedAt?: string;
  failureReason?: string;
  verification?: AgentVerificationRecord;
  /** Figures the runtime reports with each exchange; the stats fallback is built from them. */
  messageCount?: number;
  messagesProcessed?: number;
  messagesFailed?: number;
  responseMsTotal?: number;
  firstMessageAt?: string;
  lastMessageAt?: string;
  /** Set by reset-memory: messages up to this time stay in the history but are no longer replayed into prompts. */
  historyResetAt?: string;
  /**
   * Two pauses, each set and lifted on its own so neither hides or lifts the other: the spending
   * cap's (`pausedReason: 'budget'`, since `pausedAt`) and the loop breaker's (`loopTrip`, the
   * evidence with its `at`).
   */
  pausedReason?: 'budget';
  pausedAt?: string;
  loopTrip?: import('./loop-breaker').LoopTrip;
  /** The loop breaker's thresholds the owner set; absent ones take the defaults. */
  loopBreaker?: Partial<Record<'repeatLimit' | 'windowSeconds' | 'spendShare' | 'spendWindowMinutes', number>>;
}

export const COUNTER_SHARDS = 8;
export const AGENT_COUNTER = 'agents';
export const DEPLOYMENT_COUNTER = 'deployments';
export const AGENT_COUNTER_FIELDS = ['total', 'provisioning', 'running', 'stopped', 'error'] as const;
export const DEPLOYMENT_COUNTER_FIELDS = ['total', 'successful', 'failed'] as const;

export interface PlatformCounters {
  agents: Record<(typeof AGENT_COUNTER_FIELDS)[number], number>;
  deployments: Record<(typeof DEPLOYMENT_COUNTER_FIELDS)[number], number>;
}

/** One `ADD` on a random shard of a platform counter; deltas on one field are summed, zeros left out (undefined when none remain). */
export function counterUpdate(name: typeof AGENT_COUNTER | typeof DEPLOYMENT_COUNTER, deltas: [field: string, delta: number][]): TransactItem | undefined {
  const merged = new Map<string, number>();
  for (const [field, delta] of deltas) merged.set(field, (merged.get(field) ?? 0) + delta);
  const entries = [...merged].filter(([, d]) => d !== 0);
  if (!entries.length) return undefined;
  const names: Record<string, string> = {};
  const values: Record<string, number> = {};
  entries.forEach(([field, delta], i) => {
    names[`#c${i}`] = field;
    values[`:c${i}`] = delta;
  });
  const expression = 'ADD ' + entries.map((_, i) => `#c${i} :c${i}`).join(', ');
  return tx.update(keys.counter(`${name}#${randomInt(COUNTER_SHARDS)}`), { expression, names, values });
}

/** `count` agents moving from one shown status to another; no `from` means newly created. */
export const agentStatusMove = (from: AgentStatusValue | undefined, to: AgentStatusValue, count = 1) =>
  counterUpdate(AGENT_COUNTER, [from ? [from, -count] : ['total', count], [to, count]]);

export const deploymentCount = (...fields: (typeof DEPLOYMENT_COUNTER_FIELDS)[number][]) =>
  counterUpdate(
    DEPLOYMENT_COUNTER,
    fields.map((f) => [f, 1]),
  );

export const present = <T>(items: (T | undefined)[]): T[] => items.filter((i): i is T => i !== undefined);

export async function readPlatformCounters(): Promise<PlatformCounters> {
  const sum = async <F extends string>(name: string, fields: readonly F[]) => {
    const items = await queryEvery<Record<string, unknown>>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.counterPartition, ':prefix': `${name}#` },
    });
    const totals = Object.fromEntries(fields.map((f) => [f, 0])) as Record<F, number>;
    for (const item of items) for (const f of fields) totals[f] += Number(item[f] ?? 0);
    return totals;
  };
  const [agents, deployments] = await Promise.all([sum(AGENT_COUNTER, AGENT_COUNTER_FIELDS), sum(DEPLOYMENT_COUNTER, DEPLOYMENT_COUNTER_FIELDS)]);
  return { agents, deployments };
}

/** `agt_` + 16 random bytes, URL-safe and unguessable. */
export const newAgentId = () => `agt_${randomBytes(16).toString('hex')}`;

/** The plan limit held: the account already has `current` agents. */
export class AgentLimitError extends DomainError {
  constructor(
    readonly current: number,
    readonly limit: number,
  ) {
    super('limitReached', `agent limit reached: the account's plan allows ${limit}`, 'AGENT_LIMIT_REACHED', { current, limit });
  }
}

export interface NewAgent {
  name: string;
  model: string;
  config: AgentConfig;
  source: AgentRecord['source'];
}

const QUOTA_ATTEMPTS = 25;

/**
 * Creates the agent in `provisioning` and takes one unit of the account's agent quota in ONE
 * transaction: the quota item's condition `count < limit` is what makes 50 concurrent requests
 * against a limit of 3 create exactly 3. The quota item is created on first use. `also` adds
 * items that must exist exactly when the agent does (channel provisioning's encrypted tokens).
 */
export async function createAgent(
  userId: string,
  input: NewAgent,
  limit: number,
  opts: { id?: string; also?: TransactItem[]; now?: Date } = {},
): Promise<AgentRecord> {
  const at = (opts.now ?? new Date()).toISOString();
  const agent: AgentRecord = { id: opts.id ?? newAgentId(), ...input, phase: 'provisioning', createdAt: at, updatedAt: at, messageCount: 0 };
  // Listed in the sparse provisioning index until it is ready or failed, so the stranded-work reconciler finds it without a scan.
  const listed = { gsi1pk: keys.provisioningAgentsPartition, gsi1sk: keys.provisioningAgentSince(at, userId, agent.id) };
  const items = present([
    tx.put({ ...keys.agent(userId, agent.id), ...agent, ...listed }, { expression: 'attribute_not_exists(pk)' }),
    tx.update(
      keys.agentQuota(userId),
      { expression: 'ADD #count :one SET updatedAt = :at', names: { '#count': 'count' }, values: { ':one': 1, ':at': at } },
      { expression: 'attribute_not_exists(#count) OR #count < :limit', names: { '#count': 'count' }, values: { ':limit': limit } },
    ),
    agentStatusMove(undefined, 'provisioning'),
    ...(opts.also ?? []),
  ]);
  try {
    await transactRetrying(items, QUOTA_ATTEMPTS);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[1] === 'ConditionalCheckFailed') {
      throw new AgentLimitError(await agentQuotaUsed(userId), limit);
    }
    throw err;
  }
  return agent;
}

export async function agentQuotaUsed(userId: string): Promise<number> {
  const item = await tenant(userId).get<{ count?: number }>(keys.agentQuota(userId), true);
  return Number(item?.count ?? 0);
}

export async function getAgent(userId: string, agentId: string, consistent = false): Promise<AgentRecord | undefined> {
  return tenant(userId).get<AgentRecord>(keys.agent(userId, agentId), consistent);
}

/** Every agent of the account; consistent so a launch that just finished sees the agents written before it. */
export async function listAgents(userId: string, consistent = false): Promise<AgentRecord[]> {
  return tenant(userId).queryAll<AgentRecord>(keys.agentPrefix, { consistent });
}

/** Shown status of an agent given its account's instance status (see the top of this file). */
export function agentStatus(agent: Pick<AgentRecord, 'phase'>, instanceStatus: InstanceStatus | undefined): AgentStatusValue {
  if (agent.phase === 'error') return 'error';
  if (agent.phase === 'provisioning') return 'provisioning';
  return instanceStatus ?? 'provisioning';
}

/**
 * The write that makes a waiting agent `ready`. Conditional on phase `provisioning`, so an agent
 * deleted or failed meanwhile is never brought back; the caller counts it on the instance item.
 */
export const agentJoinItem = (userId: string, agentId: string, at: string): TransactItem =>
  tx.update(
    keys.agent(userId, agentId),
    { expression: 'SET phase = :ready, readyAt = :at, updatedAt = :at REMOVE gsi1pk, gsi1sk', values: { ':ready': 'ready', ':at': at } },
    { expression: 'phase = :provisioning', values: { ':provisioning': 'provisioning' } },
  );

/** The agents waiting for a launch, and the quota count read just before listing them (see agentQuotaUnchanged). */
export async function waitingAgents(userId: string): Promise<{ agents: AgentRecord[]; quotaCount: number | undefined }> {
  const quota = await tenant(userId).get<{ count?: number }>(keys.agentQuota(userId), true);
  const agents = (await listAgents(userId, true)).filter((a) => a.phase === 'provisioning');
  return { agents, quotaCount: quota?.count };
}

/**
 * A check that no agent was created since `quotaCount` was read: every creation adds to the count in
 * its own transaction, so a write carrying this check cannot miss an agent created after the
 * listing that followed the read. (A creation hidden by a removal in between would need that
 * removal to touch a listed agent or the instance, whose own conditions then fail.)
 */
export const agentQuotaUnchanged = (userId: string, quotaCount: number | undefined): TransactItem =>
  tx.conditionCheck(
    keys.agentQuota(userId),
    quotaCount === undefined
      ? { expression: 'attribute_not_exists(#count)', names: { '#count': 'count' } }
      : { expression: '#count = :count', names: { '#count': 'count' }, values: { ':count': quotaCount } },
  );

/**
 * A provisioning agent joins its running (or restarting) instance: phase `ready`, counted on the
 * instance item, which must still have the status the counters move to.
 */
export async function markAgentReady(userId: string, agentId: string, instanceStatus: InstanceStatus, now = new Date()): Promise<boolean> {
  const at = now.toISOString();
  try {
    await transactRetrying(
      present([
        agentJoinItem(userId, agentId, at),
        tx.update(
          keys.instance(userId),
          { expression: 'ADD readyAgents :one', values: { ':one': 1 } },
          { expression: '#status = :status', names: { '#status': 'status' }, values: { ':status': instanceStatus } },
        ),
        agentStatusMove('provisioning', instanceStatus),
      ]),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/**
 * The writes that fail waiting agents: phase `error`, only while still `provisioning` (one deleted or
 * settled meanwhile is left as it is), and their units of quota back. The caller moves the
 * counters (agents `provisioning` → `error`), in its one counter update.
 */
export function agentFailItems(userId: string, agentIds: string[], reason: string, at: string): TransactItem[] {
  if (!agentIds.length) return [];
  return [
    ...agentIds.map((agentId) =>
      tx.update(
        keys.agent(userId, agentId),
        {
          expression: 'SET phase = :error, failedAt = :at, failureReason = :reason, updatedAt = :at REMOVE gsi1pk, gsi1sk',
          values: { ':error': 'error', ':at': at, ':reason': reason },
        },
        { expression: 'phase = :provisioning', values: { ':provisioning': 'provisioning' } },
      ),
    ),
    tx.update(
      keys.agentQuota(userId),
      { expression: 'ADD #count :minus SET updatedAt = :at', names: { '#count': 'count' }, values: { ':minus': -agentIds.length, ':at': at } },
      { expression: '#count >= :n', names: { '#count': 'count' }, values: { ':n': agentIds.length } },
    ),
  ];
}

/** A provisioning agent whose launch failed: phase `error` and its unit of quota back. */
export async function failAgent(userId: string, agentId: string, reason: string, now = new Date()): Promise<boolean> {
  try {
    await transactRetrying(present([...agentFailItems(userId, [agentId], reason, now.toISOString()), agentStatusMove('provisioning', 'error')]));
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/**
 * Removes an agent in one transaction with everything that counts it: its unit of quota (already
 * back when it failed), its place among the instance's ready agents and the platform counters.
 * `instanceStatus` is the status read just before; the instance must still have it, so the
 * counters move from the status the agent really showed. False when the agent is gone or moved
 * meanwhile (the caller reads again). Its history and memory are deleted after, by the caller.
 */
export async function deleteAgent(userId: string, agent: Pick<AgentRecord, 'id' | 'phase'>, instanceStatus: InstanceStatus | undefined): Promise<boolean> {
  const shown = agentStatus(agent, instanceStatus);
  const at = new Date().toISOString();
  try {
    await transactRetrying(
      present([
        tx.delete(keys.agent(userId, agent.id), { expression: 'phase = :phase', values: { ':phase': agent.phase } }),
        agent.phase === 'error'
          ? undefined
          : tx.update(
              keys.agentQuota(userId),
              { expression: 'ADD #count :minus SET updatedAt = :at', names: { '#count': 'count' }, values: { ':minus': -1, ':at': at } },
              { expression: '#count > :zero', names: { '#count': 'count' }, values: { ':zero': 0 } },
            ),
        agent.phase === 'ready'
          ? tx.update(
              keys.instance(userId),
              { expression: 'ADD readyAgents :minus', values: { ':minus': -1 } },
              { expression: '#status = :status AND readyAgents > :zero', names: { '#status': 'status' }, values: { ':status': shown, ':zero': 0 } },
            )
          : undefined,
        counterUpdate(AGENT_COUNTER, [
          ['total', -1],
          [shown, -1],
        ]),
      ]),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/** What exists only for one agent and goes with it: its messages, memory and installed skills. */
const agentOwnedPrefixes = (agentId: string) => [keys.agentMessagePrefix(agentId), keys.memoryPrefix(agentId), `${keys.installedSkillPrefix}${agentId}#`];

/**
 * Deletes what a deleted agent owned (after `deleteAgent`): every item under its prefixes, its
 * skill quota and its channel provisioning record, up to 25 deletes at a time.
 */
export async function deleteAgentOwnedItems(userId: string, agentId: string): Promise<void> {
  const store = tenant(userId);
  const owned = [
    ...(await Promise.all(agentOwnedPrefixes(agentId).map((prefix) => store.queryAll(prefix)))).flat(),
    keys.skillQuota(userId, agentId),
    keys.channelProvision(userId, agentId),
  ];
  for (let i = 0; i < owned.length; i += 25) await Promise.all(owned.slice(i, i + 25).map((item) => store.delete({ pk: item.pk, sk: item.sk })));
}

/** Replaces the stored configuration of an owned agent; false when the agent is not the caller's. */
export async function replaceAgentConfig(userId: string, agentId: string, config: AgentConfig, now = new Date()): Promise<AgentRecord | undefined> {
  try {
    return await tenant(userId).update<AgentRecord>(
      keys.agent(userId, agentId),
      { expression: 'SET config = :config, updatedAt = :at', values: { ':config': config, ':at': now.toISOString() } },
      { expression: 'attribute_exists(pk)' },
    );
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}

/**
 * Removes the agent's custom system prompt (the rest of its configuration stays) in one conditional
 * write, so a concurrent configuration change is never overwritten; false when it had none.
 */
export async function clearAgentSystemPrompt(userId: string, agentId: string, now = new Date()): Promise<boolean> {
  try {
    await tenant(userId).update(
      keys.agent(userId, agentId),
      {
        expression: 'REMOVE #config.#prompt SET updatedAt = :at',
        names: { '#config': 'config', '#prompt': 'systemPrompt' },
        values: { ':at': now.toISOString() },
      },
      { expression: 'attribute_exists(#config.#prompt)' },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export async function setAgentVerification(userId: string, agentId: string, verification: AgentVerificationRecord | null): Promise<boolean> {
  const update = verification
    ? { expression: 'SET verification = :v, updatedAt = :at', values: { ':v': verification, ':at': new Date().toISOString() } }
    : { expression: 'REMOVE verification SET updatedAt = :at', values: { ':at': new Date().toISOString() } };
  try {
    await tenant(userId).update(keys.agent(userId, agentId), update, { expression: 'attribute_exists(pk)' });
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export const pausedByBudget = (agent: Pick<AgentRecord, 'pausedReason'>) => agent.pausedReason === 'budget';
export const pausedByLoop = (agent: Pick<AgentRecord, 'loopTrip'>) => agent.loopTrip !== undefined;

/** Marks an agent paused by its spending cap (a loop breaker's pause stays as it is); false when the agent no longer exists. */
export async function pauseAgentForBudget(userId: string, agentId: string, now = new Date()): Promise<boolean> {
  try {
    await tenant(userId).update(
      keys.agent(userId, agentId),
      { expression: 'SET pausedReason = :budget, pausedAt = :now', values: { ':budget': 'budget', ':now': now.toISOString() } },
      { expression: 'attribute_exists(pk)' },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/** Lifts the budget's pause of an agent, not the loop breaker's; false when the agent is not paused by the budget (or is gone). */
export async function resumeAgentPausedByBudget(userId: string, agentId: string): Promise<boolean> {
  try {
    await tenant(userId).update(
      keys.agent(userId, agentId),
      { expression: 'REMOVE pausedReason, pausedAt' },
      { expression: 'pausedReason = :budget', values: { ':budget': 'budget' } },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

// --- messages -----------------------------------------------------------------------------------

export interface StoredMessage extends Record<string, unknown> {
  id: string;
  agentId: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  createdAt: string;
}

export interface ExchangeReport {
  messages: { role: StoredMessage['role']; content: string }[];
  /** Time the model took to answer, when the exchange had an answer. */
  responseMs?: number;
  /** The exchange ended in an error (no answer). */
  failed?: boolean;
}

/**
 * Stores the messages of one exchange and the agent's figures in one transaction, so the history
 * and the counters the stats fallback reads never disagree. Returns the stored messages, or
 * undefined when the agent does not exist.
 */
export async function appendExchange(userId: string, agentId: string, report: ExchangeReport, now = new Date()): Promise<StoredMessage[] | undefined> {
  const base = now.getTime();
  const stored = report.messages.map((m, i): StoredMessage => {
    const createdAt = new Date(base + i).toISOString();
    return { id: `msg_${randomBytes(12).toString('hex')}`, agentId, role: m.role, content: m.content, createdAt };
  });
  const at = now.toISOString();
  const processed = report.messages.some((m) => m.role === 'user') ? 1 : 0;
  try {
    await transactRetrying([
      tx.update(
        keys.agent(userId, agentId),
        {
          expression:
            'ADD messageCount :n, messagesProcessed :p, messagesFailed :f, responseMsTotal :ms SET lastMessageAt = :at, firstMessageAt = if_not_exists(firstMessageAt, :at)',
          values: { ':n': stored.length, ':p': processed, ':f': report.failed ? 1 : 0, ':ms': Math.max(0, Math.round(report.responseMs ?? 0)), ':at': at },
        },
        { expression: 'attribute_exists(pk)' },
      ),
      ...stored.map((m) => tx.put({ ...keys.agentMessage(userId, agentId, `${m.createdAt}#${m.id}`), ...m })),
      // The platform's message figures (GET /api/metrics) move with the history they count.
      ...[messageCountUpdate(processed, now)].filter((item) => item !== undefined),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') return undefined;
    throw err;
  }
  return stored;
}

const messageView = (m: StoredMessage) => ({ id: m.id, role: m.role, content: m.content, createdAt: m.createdAt });

/** A page of messages counted from the newest (`offset` 0 is the newest), newest first. */
export async function listMessages(userId: string, agentId: string, limit: number, offset: number) {
  const wanted = offset + limit;
  const page: StoredMessage[] = [];
  let cursor: string | undefined;
  do {
    const out = await tenant(userId).query<StoredMessage>(keys.agentMessagePrefix(agentId), {
      newestFirst: true,
      cursor,
      limit: Math.min(wanted - page.length, 500),
    });
    page.push(...out.items);
    cursor = out.cursor;
  } while (cursor && page.length < wanted);
  return page.slice(offset, wanted).map(messageView);
}

/**
 * The newest `count` messages in chronological order, none older than the agent's last memory
 * reset (`resetAt`): what a runtime replays into its prompts.
 */
export async function recentHistory(userId: string, agentId: string, count: number, resetAt?: string) {
  const newest = await listMessages(userId, agentId, count, 0);
  return newest.filter((m) => !resetAt || m.createdAt > resetAt).reverse();
}

/** A rewind: the conversation replayed into prompts is again the one replayed at the checkpoint (`at` undefined: all of it). */
export async function restoreHistoryReset(userId: string, agentId: string, at: string | undefined): Promise<void> {
  try {
    await tenant(userId).update(
      keys.agent(userId, agentId),
      at ? { expression: 'SET historyResetAt = :at', values: { ':at': at } } : { expression: 'REMOVE historyResetAt' },
      { expression: 'attribute_exists(pk)' },
    );
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}

/** reset-memory: the conversation so far is no longer replayed into prompts (it stays readable). */
export async function markHistoryReset(userId: string, agentId: string, now = new Date()): Promise<void> {
  try {
    await tenant(userId).update(
      keys.agent(userId, agentId),
      { expression: 'SET historyResetAt = :at', values: { ':at': now.toISOString() } },
      { expression: 'attribute_exists(pk)' },
    );
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}

/** An agent accepted and still waiting for its launch, as the provisioning index lists it. */
export interface PendingAgentRef {
  userId: string;
  agentId: string;
  createdAt: string;
}

/**
 * Agents in phase `provisioning` accepted before `acceptedBefore` (the stranded-work reconciler).
 * Reads the sparse index only, so the cost follows the launches under way, never the table.
 */
export async function agentsPendingSince(acceptedBefore: Date): Promise<PendingAgentRef[]> {
  const items = await queryEvery<{ pk: string; id: string; createdAt: string }>({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :p AND gsi1sk < :before',
    ExpressionAttributeValues: { ':p': keys.provisioningAgentsPartition, ':before': acceptedBefore.toISOString() },
    ProjectionExpression: 'pk, id, createdAt',
  });
  return items.flatMap((item) => {
    const userId = keys.userIdOfPartition(item.pk);
    return userId ? [{ userId, agentId: item.id, createdAt: item.createdAt }] : [];
  });
}
