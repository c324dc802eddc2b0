import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { LaunchHandle } from '#adapters/launcher';
import { instanceConfig } from '#platform/config';
import type { EnvelopeRecord } from '#platform/crypto/envelope';
import {
  AGENT_COUNTER,
  agentJoinItem,
  agentFailItems,
  agentQuotaUnchanged,
  counterUpdate,
  deploymentCount,
  failAgent,
  getAgent,
  listAgents,
  markAgentReady,
  present,
  waitingAgents,
  type AgentRecord,
  type InstanceStatus,
} from './agents';
import { db, tableName } from './client';
import * as keys from './keys';
import { recordActivity } from './idle-watch';
import { lifecycleEventItems, recordLifecycleEvent, type EventCause, type LifecycleEventInput } from './lifecycle-events';
import { deadInstanceCheck } from './metrics';
import { ensureSubdomainLookup } from './subdomain-lookups';
import { ConditionFailedError, getGlobal, tenant, tx, type TransactItem } from './tenant';
import { transactRetrying } from './transact-retry';
import { DomainError } from '#platform/errors';

/**
 * The gateway token's envelope encryption (and the key provider behind it) loads with the first token
 * read or write: most functions that import this module (through the instance push) never need it.
 */
const envelope = () => import('#platform/crypto/envelope');

/**
 * The account's one instance (spec 2.5) at `USER#<id> / INSTANCE`: the runtime process or task that
 * runs every agent of the account. Every change of `status` is a conditional write on
 * (status, generation, readyAgents) read just before, so concurrent requests settle in the
 * database: each write lands on the state the previous one left, and the last one written wins
 * (docs/architecture.md §8).
 *
 * State machine (spec section 3: start, stop, restart and update apply from any state; the exits it
 * leaves open are ours). `generation` grows by one with each transition that writes; the
 * provisioner's work for a generation is dropped once a newer one exists, so an operation that
 * arrives while a launch is in flight supersedes it.
 *   (none)                 --first agent provisioned-->              provisioning
 *   provisioning           --health check answers-->                 running
 *   provisioning           --never healthy / launch gave up (DLQ)--> error
 *   running                --health check fails (heartbeat)-->       error
 *   stopped | error        --start, or a new agent is provisioned--> provisioning
 *   provisioning | running --start-->                                (unchanged: already on its way to running)
 *   any but stopped        --stop-->                                 stopped (an in-flight launch is superseded)
 *   stopped                --stop-->                                 (unchanged)
 *   any                    --restart / update / repair-->            provisioning (an in-flight launch is superseded;
 *                                                                     update rolls back to the previous image if the new one never gets healthy)
 *   running | provisioning --reset-memory-->                         provisioning (relaunched without the wiped memory)
 *   stopped | error        --reset-memory-->                         (unchanged; the memory is wiped)
 * The internal `launch` (an agent provisioned on a stopped or failed instance) is the only
 * operation with illegal sources: it is not taken from `provisioning` or `running`.
 */

export type InstanceOp = 'launch' | 'start' | 'stop' | 'restart' | 'update' | 'repair' | 'reset-memory';

/** Where each operation takes each status; `same` leaves the instance as it is (the call still succeeds); absent is illegal. */
export const TRANSITIONS: Record<InstanceOp, Partial<Record<InstanceStatus, InstanceStatus | 'same'>>> = {
  launch: { stopped: 'provisioning', error: 'provisioning' },
  start: { provisioning: 'same', running: 'same', stopped: 'provisioning', error: 'provisioning' },
  stop: { provisioning: 'stopped', running: 'stopped', error: 'stopped', stopped: 'same' },
  restart: { provisioning: 'provisioning', running: 'provisioning', stopped: 'provisioning', error: 'provisioning' },
  update: { provisioning: 'provisioning', running: 'provisioning', stopped: 'provisioning', error: 'provisioning' },
  repair: { provisioning: 'provisioning', running: 'provisioning', stopped: 'provisioning', error: 'provisioning' },
  'reset-memory': { provisioning: 'provisioning', running: 'provisioning', stopped: 'same', error: 'same' },
};

export interface InstanceRecord extends Record<string, unknown> {
  userId: string;
  status: InstanceStatus;
  generation: number;
  /** The operation that started the current generation. */
  op: InstanceOp;
  /** Id of that operation, answered to the caller and carried by its events. */
  operationId?: string;
  /** Provisioner job that owns the launch of the current generation. */
  jobOwner?: string;
  subdomain: string;
  /** Email of the account when the instance was created: whom the model layer bills and gates. */
  ownerEmail: string;
  image: string;
  runtimeVersion: string;
  previousImage?: string;
  previousRuntimeVersion?: string;
  handle?: LaunchHandle;
  startedAt?: string | null;
  createdAt: string;
  updatedAt: string;
  /** Agents in phase `ready` (they take the instance's status in the counters). */
  readyAgents: number;
  lastError?: string;
  /** The last error a launch attempt of this generation threw; the give-up reason quotes it. */
  lastLaunchAttemptError?: string;
  rolledBack?: boolean;
  /** Epoch ms of the platform's own relaunches after unexpected exits within the last hour (the hourly bound). */
  relaunchesAt?: number[];
  /** Set when the platform stopped the instance on its own (`budget`, `idle`); a stop the user asked for has none. */
  stopReason?: string;
  /** The generation a wake on demand started (domain/lifecycle/wake.ts): later wakes join its launch. */
  wakeGeneration?: number;
  /** The subdomain's global look-up (keys.agentSubdomain), which account deletion removes with the instance. */
  globalKeys?: keys.Key[];
}

export class NoInstanceError extends DomainError {
  constructor() {
    super('notFound', 'this account has no instance yet: provision an agent first', 'NOT_FOUND');
  }
}
export class IllegalTransitionError extends Error {
  constructor(
    readonly current: InstanceStatus,
    readonly op: InstanceOp,
  ) {
    super(`cannot ${op} an instance that is ${current}`);
  }
}

/** DNS-safe and stable per account, revealing nothing about the user id. */
export const subdomainFor = (userId: string) => `agent-${createHash('sha256').update(userId).digest('hex').slice(0, 16)}`;

/** The public URL of an account's instance (spec 2.4, 2.5): its subdomain, which the edge routes to it. */
export const instanceUrl = (userId: string) => instanceConfig().agentUrls.http(subdomainFor(userId));

/** Where a client opens an agent's websocket: through the edge, on the account's subdomain. */
export const agentWebsocketUrl = (userId: string, agentId: string) => `${instanceConfig().agentUrls.websocket(subdomainFor(userId))}/agents/${agentId}`;

/** The account whose instance answers at `subdomain` (what the edge routes by); undefined for one no instance has. */
export async function userIdForSubdomain(subdomain: string): Promise<string | undefined> {
  return (await getGlobal<{ userId?: string }>(keys.agentSubdomain(subdomain)))?.userId;
}

export async function getInstance(userId: string, consistent = false): Promise<InstanceRecord | undefined> {
  return tenant(userId).get<InstanceRecord>(keys.instance(userId), consistent);
}

// --- the copy beside the agents, so the agent list reads the instance in the same Query -----------

/** What the agent list shows of the instance. */
export interface ListedInstance {
  status: InstanceStatus;
}

interface ListedInstanceItem extends Record<string, unknown> {
  status?: InstanceStatus;
  /** The account had agents but no instance when the copy was filled. */
  noInstance?: boolean;
}

/** The write that keeps keys.agentListInstance's status equal to the instance's, in the same transaction as each write of `status`. */
const listedInstanceUpdate = (userId: string, status: InstanceStatus): TransactItem =>
  tx.update(keys.agentListInstance(userId), { expression: 'SET #status = :status', names: { '#status': 'status' }, values: { ':status': status } });

/**
 * Every agent of the account and what the list shows of its instance, in one Query (the copy sorts
 * just before the agents). An account without a usable copy (one whose instance was written before
 * the copy existed, or that has agents but never had an instance) has its instance read beside,
 * once: the copy is then filled from that read (see backfillListedInstance).
 */
export async function listAgentsWithInstance(userId: string): Promise<{ agents: AgentRecord[]; instance: ListedInstance | undefined }> {
  const items = await tenant(userId).queryBetween<Record<string, unknown>>(keys.agentListRange.from, keys.agentListRange.to);
  const copyKey = keys.agentListInstance(userId).sk;
  const copy = items.find((item) => item.sk === copyKey) as ListedInstanceItem | undefined;
  const agents = items.filter((item) => item.sk !== copyKey && item.sk.startsWith(keys.agentPrefix)) as unknown as AgentRecord[];
  if (copy?.status) return { agents, instance: { status: copy.status } };
  if (copy?.noInstance || !agents.length) return { agents, instance: undefined };
  const instance = await getInstance(userId, true);
  await backfillListedInstance(userId, instance);
  return { agents, instance };
}

/**
 * Fills a missing copy from a consistent read of the instance. Safe against the writers: every
 * write of `status` also writes the copy, so one that lands after the read has set `status`
 * (ensureInstance, writeChange) and the condition fails, writing nothing. No instance is recorded
 * as `noInstance`, which ensureInstance's put replaces.
 */
async function backfillListedInstance(userId: string, instance: InstanceRecord | undefined): Promise<void> {
  const names = { '#status': 'status' };
  const update = instance
    ? { expression: 'SET #status = :status', names, values: { ':status': instance.status } }
    : { expression: 'SET noInstance = :yes', values: { ':yes': true } };
  try {
    await tenant(userId).update(keys.agentListInstance(userId), update, { expression: 'attribute_not_exists(#status)', names });
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}

export interface NewInstance {
  ownerEmail: string;
  image: string;
  runtimeVersion: string;
  jobOwner: string;
}

export const newOperationId = () => `op_${randomBytes(12).toString('hex')}`;

/** Creates the instance in `provisioning` (generation 1) unless it exists; `created` says which. */
export async function ensureInstance(userId: string, input: NewInstance, now = new Date()): Promise<{ instance: InstanceRecord; created: boolean }> {
  const at = now.toISOString();
  const instance: InstanceRecord = {
    userId,
    status: 'provisioning',
    generation: 1,
    op: 'launch',
    operationId: newOperationId(),
    jobOwner: input.jobOwner,
    subdomain: subdomainFor(userId),
    globalKeys: [keys.agentSubdomain(subdomainFor(userId))],
    ownerEmail: input.ownerEmail,
    image: input.image,
    runtimeVersion: input.runtimeVersion,
    startedAt: null,
    createdAt: at,
    updatedAt: at,
    readyAgents: 0,
  };
  const events = lifecycleEventItems(
    userId,
    [
      {
        type: 'instance.requested',
        cause: 'user',
        op: 'launch',
        operationId: instance.operationId,
        generation: 1,
        status: 'provisioning',
        image: input.image,
        runtimeVersion: input.runtimeVersion,
      },
    ],
    now,
  );
  try {
    const listed = { gsi1pk: keys.provisioningPartition, gsi1sk: keys.provisioningSince(at, userId) };
    await transactRetrying(
      present([
        tx.put({ ...keys.instance(userId), ...instance, ...listed }, { expression: 'attribute_not_exists(pk)' }),
        tx.put({ ...keys.agentSubdomain(instance.subdomain), userId }),
        tx.put({ ...keys.agentListInstance(userId), status: instance.status }),
        deploymentCount('total'),
        ...events.items,
      ]),
    );
  } catch (err) {
    if (!(err instanceof ConditionFailedError) || err.reasons[0] !== 'ConditionalCheckFailed') throw err;
    const existing = await getInstance(userId, true);
    if (!existing) throw err;
    return { instance: existing, created: false };
  }
  await events.publish();
  return { instance, created: true };
}

const SNAPSHOT_ATTEMPTS = 8;

interface Change {
  to: InstanceStatus;
  set?: Record<string, unknown>;
  remove?: string[];
  /** A launch that began (deployments.total) or ended (successful / failed). */
  deployment?: 'total' | 'successful' | 'failed';
  /** Lifecycle events written in the same transaction, published once it commits. */
  events?: LifecycleEventInput[];
  /** Other items written in the same transaction (platform figures). */
  alongside?: TransactItem[];
  /** Waiting agents that join the instance in this write (each counted in readyAgents), and the check that none was missed. */
  joining?: { agentIds: string[]; quotaCount: number | undefined };
  /** Waiting agents that fail with the launch in this write, their quota released. */
  failing?: { agentIds: string[]; reason: string };
}

/**
 * Writes one status change against the snapshot it was decided on. The condition covers status,
 * generation and readyAgents, so the agent counters move by exactly the agents that move.
 */
async function writeChange(userId: string, snap: InstanceRecord, change: Change, bumpGeneration: boolean, now: Date): Promise<InstanceRecord> {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = { ':to': change.to, ':at': now.toISOString(), ':cur': snap.status, ':gen': snap.generation, ':k': snap.readyAgents };
  const sets = ['#status = :to', 'updatedAt = :at'];
  if (bumpGeneration) {
    sets.push('generation = :next');
    values[':next'] = snap.generation + 1;
  }
  Object.entries(change.set ?? {}).forEach(([field, value], i) => {
    names[`#s${i}`] = field;
    values[`:s${i}`] = value;
    sets.push(`#s${i} = :s${i}`);
  });
  const removes = (change.remove ?? []).map((field, i) => {
    names[`#r${i}`] = field;
    return `#r${i}`;
  });
  // The provisioning listing (stuckInProvisioning) holds an instance exactly while it is in `provisioning`.
  if (change.to === 'provisioning') {
    sets.push('gsi1pk = :listPk', 'gsi1sk = :listSk');
    Object.assign(values, { ':listPk': keys.provisioningPartition, ':listSk': keys.provisioningSince(now.toISOString(), userId) });
  } else if (snap.status === 'provisioning') removes.push('gsi1pk', 'gsi1sk');
  const joining = change.joining?.agentIds ?? [];
  const failing = change.failing?.agentIds ?? [];
  if (joining.length) {
    sets.push('readyAgents = :ready');
    values[':ready'] = snap.readyAgents + joining.length;
  }
  const expression = `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`;
  const events = lifecycleEventItems(userId, change.events ?? [], now);
  await transactRetrying(
    present([
      tx.update(keys.instance(userId), { expression, names, values }, { expression: '#status = :cur AND generation = :gen AND readyAgents = :k' }),
      listedInstanceUpdate(userId, change.to),
      // The ready agents take the instance's new status; the joining ones leave `provisioning` for it, the failing ones for `error`.
      counterUpdate(AGENT_COUNTER, [
        [snap.status, -snap.readyAgents],
        [change.to, snap.readyAgents],
        ['provisioning', -joining.length - failing.length],
        [change.to, joining.length],
        ['error', failing.length],
      ]),
      change.deployment ? deploymentCount(change.deployment) : undefined,
      ...events.items,
      ...(change.alongside ?? []),
      ...joining.map((agentId) => agentJoinItem(userId, agentId, now.toISOString())),
      change.joining ? agentQuotaUnchanged(userId, change.joining.quotaCount) : undefined,
      ...agentFailItems(userId, failing, change.failing?.reason ?? '', now.toISOString()),
    ]),
  );
  await events.publish();
  const after = { ...snap, ...change.set, status: change.to, updatedAt: now.toISOString(), readyAgents: snap.readyAgents + joining.length } as InstanceRecord;
  // An instance created before the subdomain look-up existed gets it with its next change, under the
  // backfill's own rule (never over another account's name). Not in the transaction above, so a
  // taken name cannot fail the transition; a failure here is left to the backfill's next sweep.
  if (!snap.globalKeys && snap.subdomain) {
    const outcome = await ensureSubdomainLookup(userId, snap.subdomain).catch(() => 'raced' as const);
    if (outcome === 'written') after.globalKeys = [keys.agentSubdomain(snap.subdomain)];
  }
  for (const field of change.remove ?? []) delete after[field];
  if (bumpGeneration) after.generation = snap.generation + 1;
  return after;
}

export interface TransitionResult {
  before: InstanceRecord;
  after: InstanceRecord;
  /** False when the operation found the instance where it leads (a start on a running instance): nothing was written. */
  changed: boolean;
}

/**
 * A lifecycle transition (see the state machine above). Throws NoInstanceError, or
 * IllegalTransitionError for the internal `launch` on an instance that is not stopped or failed.
 * `set` may add fields from the snapshot (an update keeps the old image). A launch in flight
 * (`provisioning`) that this replaces is recorded as superseded in the same transaction.
 */
export async function transitionInstance(
  userId: string,
  op: InstanceOp,
  opts: {
    jobOwner?: (generation: number) => string;
    set?: (snap: InstanceRecord) => Record<string, unknown>;
    cause?: EventCause;
    /**
     * The platform acting on what it saw (a dead process, a stuck launch): the transition applies only
     * while the instance is still at that generation and status, so anything that moved it since
     * (the owner's stop, a newer launch) wins and nothing is written (`changed: false`).
     */
    expect?: { generation: number; status: InstanceStatus };
    /** Why the platform itself stopped the instance (`budget`): kept as `stopReason` until the next transition, so a stop the owner asked for (none) is never undone. */
    stopReason?: string;
    /** Why the platform acts (an exit code, a stuck launch): an `instance.unhealthy` event with it precedes the request, which carries it too. */
    reason?: string;
    /** Carried by the `instance.requested` event (a wake: what woke the instance). */
    details?: Record<string, unknown>;
  } = {},
  now = new Date(),
): Promise<TransitionResult> {
  const cause = opts.cause ?? 'user';
  for (let attempt = 1; ; attempt += 1) {
    const snap = await getInstance(userId, true);
    if (!snap) throw new NoInstanceError();
    if (opts.expect && (snap.generation !== opts.expect.generation || snap.status !== opts.expect.status)) return { before: snap, after: snap, changed: false };
    const to = TRANSITIONS[op][snap.status];
    if (!to) throw new IllegalTransitionError(snap.status, op);
    if (to === 'same') return { before: snap, after: snap, changed: false };
    const operationId = newOperationId();
    const set: Record<string, unknown> = { op, operationId, ...opts.set?.(snap) };
    const remove = ['lastError', 'rolledBack', 'lastLaunchAttemptError'];
    // The owner's own operation gives the instance a fresh relaunch budget (domain/lifecycle/relaunch.ts).
    if (cause === 'user') remove.push('relaunchesAt');
    if (opts.stopReason) set.stopReason = opts.stopReason;
    else remove.push('stopReason');
    if (opts.jobOwner) set.jobOwner = opts.jobOwner(snap.generation + 1);
    else remove.push('jobOwner');
    const generation = snap.generation + 1;
    const events: LifecycleEventInput[] = [];
    if (opts.reason && snap.status === 'running') {
      events.push({
        type: 'instance.unhealthy',
        cause,
        op: snap.op,
        operationId: snap.operationId,
        generation: snap.generation,
        status: 'running',
        reason: opts.reason,
      });
    }
    if (snap.status === 'provisioning') {
      events.push({
        type: 'instance.superseded',
        cause,
        op: snap.op,
        operationId: snap.operationId,
        generation: snap.generation,
        status: to,
        reason: `superseded by ${op}`,
      });
    }
    events.push({
      type: 'instance.requested',
      cause,
      op,
      operationId,
      generation,
      status: to,
      image: set.image as string | undefined,
      runtimeVersion: set.runtimeVersion as string | undefined,
      reason: opts.reason ?? opts.stopReason,
      details: opts.details,
    });
    if (to === 'stopped') events.push({ type: 'instance.stopped', cause, op, operationId, generation, status: to, reason: opts.reason ?? opts.stopReason });
    try {
      const after = await writeChange(userId, snap, { to, set, remove, deployment: to === 'provisioning' ? 'total' : undefined, events }, true, now);
      return { before: snap, after, changed: true };
    } catch (err) {
      if (!(err instanceof ConditionFailedError) || attempt >= SNAPSHOT_ATTEMPTS) throw err;
    }
  }
}

/** DynamoDB's bound on the items of one transaction. */
const TRANSACTION_ITEMS = 100;

/**
 * Waiting agents that join (or fail) in the very write that settles the launch: two items each (the
 * agent, its event) beside at most eight of the transition's own (instance, listed copy, counters,
 * deployments, two events, a platform figure, the quota), within TRANSACTION_ITEMS. The rest of a
 * larger crowd (the biggest plan allows 100 agents, admins 1000) joins just before, in chunks, on
 * the instance still launching: a ready agent shows its instance's status, so they too show
 * `provisioning` until that same write. (Failing ones beyond it fail just after, in
 * settlePendingAgents: nothing shows a failed launch as running.)
 */
const SETTLED_WITH_TRANSITION = 45;

/**
 * Joining agents puts their creation and removal under the transition's conditions, so a settle may
 * have to read again a few more times than a bare transition.
 */
const SETTLE_ATTEMPTS = 25;
const FAIL_WITH_TRANSITION_ATTEMPTS = 3;

/**
 * Joins `agentIds` to the instance while it still launches `generation` (see SETTLED_WITH_TRANSITION).
 * The ones that joined; a chunk whose condition fails (an agent gone, the launch superseded) stops
 * here, and the caller reads again. Counters do not move: the agents show `provisioning` before and after.
 */
async function joinAhead(userId: string, generation: number, agentIds: string[], now: Date): Promise<string[]> {
  const joined: string[] = [];
  const perChunk = TRANSACTION_ITEMS - 1;
  for (let i = 0; i < agentIds.length; i += perChunk) {
    const chunk = agentIds.slice(i, i + perChunk);
    try {
      await transactRetrying([
        tx.update(
          keys.instance(userId),
          { expression: 'ADD readyAgents :n', values: { ':n': chunk.length } },
          {
            expression: '#status = :provisioning AND generation = :gen',
            names: { '#status': 'status' },
            values: { ':provisioning': 'provisioning', ':gen': generation },
          },
        ),
        ...chunk.map((agentId) => agentJoinItem(userId, agentId, now.toISOString())),
      ]);
      joined.push(...chunk);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      break;
    }
  }
  return joined;
}

/**
 * Ends the launch of `generation`: `running` (healthy) or `error` (never healthy, given up, or the
 * running instance died: `unhealthy`). Undefined when that generation is no longer current (a
 * newer transition won) or the instance is not in a status the outcome applies to.
 *
 * `running` joins the agents waiting for the launch in the same transaction (`joining`), so no
 * reader ever sees the instance running beside an agent of it still `provisioning`. `error` with
 * `failWaiting` fails them in it (`failing`): for callers that give the launch up, not for one
 * that relaunches at once (the local stack at start), whose agents wait for the new launch.
 */
export async function settleLaunch(
  userId: string,
  generation: number,
  outcome: { status: 'running'; set: Record<string, unknown> } | { status: 'error'; reason: string; failWaiting?: true },
  now = new Date(),
  cause: EventCause = 'provisioner',
): Promise<InstanceRecord | undefined> {
  const joinedAhead: string[] = [];
  for (let attempt = 1; ; attempt += 1) {
    const snap = await getInstance(userId, true);
    const applies = outcome.status === 'running' ? snap?.status === 'provisioning' : snap?.status === 'provisioning' || snap?.status === 'running';
    if (!snap || snap.generation !== generation || !applies) return undefined;
    const about = { cause, op: snap.op, operationId: snap.operationId, generation };
    const agentRunning = (agentId: string): LifecycleEventInput => ({
      cause,
      type: 'agent.running',
      agentId,
      status: 'running',
      operationId: snap.operationId,
    });
    let change: Change;
    if (outcome.status === 'running') {
      const waiting = await waitingAgents(userId);
      if (waiting.agents.length > SETTLED_WITH_TRANSITION) {
        if (attempt >= SETTLE_ATTEMPTS) throw new ConditionFailedError('the waiting agents kept changing');
        const beyond = waiting.agents.slice(SETTLED_WITH_TRANSITION).map((a) => a.id);
        joinedAhead.push(...(await joinAhead(userId, generation, beyond, now)));
        continue;
      }
      const joining = waiting.agents.map((a) => a.id);
      change = {
        to: 'running',
        set: { ...outcome.set, startedAt: now.toISOString() },
        remove: ['lastError', 'lastLaunchAttemptError'],
        deployment: 'successful',
        joining: { agentIds: joining, quotaCount: waiting.quotaCount },
        events: [
          {
            ...about,
            type: 'instance.running',
            status: 'running',
            image: (outcome.set.image as string | undefined) ?? snap.image,
            runtimeVersion: (outcome.set.runtimeVersion as string | undefined) ?? snap.runtimeVersion,
          },
          ...joining.map(agentRunning),
        ],
      };
    } else {
      // The error must land whatever the agents do: after a few tries it goes alone, and settlePendingAgents fails them after.
      const failWaiting = outcome.failWaiting && attempt <= FAIL_WITH_TRANSITION_ATTEMPTS;
      const failing = failWaiting ? (await waitingAgents(userId)).agents.slice(0, SETTLED_WITH_TRANSITION).map((a) => a.id) : [];
      change = {
        to: 'error',
        set: { lastError: outcome.reason },
        failing: { agentIds: failing, reason: outcome.reason },
        deployment: snap.status === 'provisioning' ? 'failed' : undefined,
        // The heartbeat records its own failed check with its sample.
        alongside: snap.status === 'running' && cause !== 'heartbeat' ? [deadInstanceCheck(now)] : undefined,
        events: [
          ...(snap.status === 'running' ? [{ ...about, type: 'instance.unhealthy' as const, status: 'running', reason: outcome.reason }] : []),
          { ...about, type: 'instance.error', status: 'error', reason: outcome.reason },
          ...failing.map(
            (agentId): LifecycleEventInput => ({ cause, type: 'agent.error', agentId, status: 'error', reason: outcome.reason, operationId: snap.operationId }),
          ),
        ],
      };
    }
    try {
      const after = await writeChange(userId, snap, change, false, now);
      if (outcome.status === 'running') {
        // Too many for the transaction, these events follow it.
        for (const agentId of joinedAhead) await recordLifecycleEvent(userId, agentRunning(agentId), now);
        // A start counts as activity: an instance nobody uses after it runs is stopped when idle.
        await recordActivity(userId, now);
      }
      return after;
    } catch (err) {
      if (!(err instanceof ConditionFailedError) || attempt >= SETTLE_ATTEMPTS) throw err;
    }
  }
}

/** Records fields of the current generation (the launched handle, a rollback) without a status change. */
/**
 * The last error a launch attempt of this generation threw (launcher refused, no capacity, image
 * pull...). Kept so that the launch that is finally given up can say why, not just that it failed.
 */
export async function recordLaunchAttemptError(userId: string, generation: number, message: string): Promise<boolean> {
  return recordOnGeneration(userId, generation, { lastLaunchAttemptError: message.slice(0, 500) });
}

/** True once per generation: whether this caller is the one to tell the owner that the launch failed. */
export async function claimFailureNotice(userId: string, generation: number): Promise<boolean> {
  try {
    await tenant(userId).update(
      keys.instance(userId),
      { expression: 'SET failureNoticeGeneration = :gen', values: { ':gen': generation } },
      { expression: 'attribute_exists(pk) AND (attribute_not_exists(failureNoticeGeneration) OR failureNoticeGeneration < :gen)' },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export async function recordOnGeneration(userId: string, generation: number, set: Record<string, unknown>, remove: string[] = []): Promise<boolean> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':gen': generation, ':at': new Date().toISOString() };
  const sets = ['updatedAt = :at'];
  Object.entries(set).forEach(([field, value], i) => {
    names[`#s${i}`] = field;
    values[`:s${i}`] = value;
    sets.push(`#s${i} = :s${i}`);
  });
  const removes = remove.map((field, i) => {
    names[`#r${i}`] = field;
    return `#r${i}`;
  });
  const update = {
    expression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
    names: Object.keys(names).length ? names : undefined,
    values,
  };
  const onGeneration = { expression: 'generation = :gen' };
  try {
    await tenant(userId).update(keys.instance(userId), update, onGeneration);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

// --- gateway token --------------------------------------------------------------------------------

const TOKEN_PURPOSE = 'gateway-token';

interface GatewayTokenItem extends Record<string, unknown> {
  tokenHash: string;
  token: EnvelopeRecord;
  createdAt: string;
}

const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex');

async function openToken(userId: string, item: GatewayTokenItem): Promise<string> {
  return (await (await envelope()).decrypt(item.token, { userId, purpose: TOKEN_PURPOSE })).toString('utf8');
}

/**
 * The account's gateway token: the one its instance checks on every request. Generated (32 random
 * bytes) and stored envelope-encrypted on first use; concurrent first uses agree on one token.
 */
export async function gatewayToken(userId: string): Promise<string> {
  const store = tenant(userId);
  const existing = await store.get<GatewayTokenItem>(keys.gatewayToken(userId), true);
  if (existing) return openToken(userId, existing);
  const token = `gw_${randomBytes(32).toString('base64url')}`;
  const item: GatewayTokenItem = {
    tokenHash: sha256Hex(token),
    token: await (await envelope()).encrypt(token, { userId, purpose: TOKEN_PURPOSE }),
    createdAt: new Date().toISOString(),
  };
  try {
    await store.put({ ...keys.gatewayToken(userId), ...item }, { expression: 'attribute_not_exists(pk)' });
    return token;
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    const winner = await store.get<GatewayTokenItem>(keys.gatewayToken(userId), true);
    if (!winner) throw err;
    return openToken(userId, winner);
  }
}

/**
 * Replaces the account's gateway token with a new one (recovery, or the owner's request) and
 * returns both: the previous one is what the running instance still accepts, to hand it the next.
 * Without a token yet there is nothing to rotate: the first use generates one.
 */
export async function replaceGatewayToken(userId: string): Promise<{ previous: string; next: string } | undefined> {
  const store = tenant(userId);
  const existing = await store.get<GatewayTokenItem>(keys.gatewayToken(userId), true);
  if (!existing) return undefined;
  const previous = await openToken(userId, existing);
  const next = `gw_${randomBytes(32).toString('base64url')}`;
  const item: GatewayTokenItem = {
    tokenHash: sha256Hex(next),
    token: await (await envelope()).encrypt(next, { userId, purpose: TOKEN_PURPOSE }),
    createdAt: new Date().toISOString(),
  };
  // Conditional on the token read: of two concurrent rotations one wins, the other is told so.
  await store.put({ ...keys.gatewayToken(userId), ...item }, { expression: 'tokenHash = :was', values: { ':was': existing.tokenHash } });
  return { previous, next };
}

/** The SHA-256 (hex) of the account's gateway token, for checks that keep it a while (the edge); undefined without one. */
export async function gatewayTokenHash(userId: string): Promise<string | undefined> {
  const item = await tenant(userId).get<GatewayTokenItem>(keys.gatewayToken(userId));
  return typeof item?.tokenHash === 'string' ? item.tokenHash : undefined;
}

/** Whether `presented` is the account's gateway token; compares hashes, so no decrypt is needed. */
export async function isGatewayToken(userId: string, presented: string): Promise<boolean> {
  const item = await tenant(userId).get<GatewayTokenItem>(keys.gatewayToken(userId));
  if (!item || typeof item.tokenHash !== 'string') return false;
  const a = Buffer.from(sha256Hex(presented), 'hex');
  const b = Buffer.from(item.tokenHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

// --- agents waiting for a launch ------------------------------------------------------------------

/**
 * The agents still in phase `provisioning` follow the instance: they join it when it runs (an agent
 * provisioned on a running instance, once the runtime has reloaded; the ones waiting for a launch
 * already joined in settleLaunch's write) or was stopped meanwhile, and fail, releasing their quota,
 * when it failed. Consistent reads, so agents written before the launch settled are never missed.
 */
export async function settlePendingAgents(userId: string, failureReason = 'the instance never became healthy'): Promise<{ joined: number; failed: number }> {
  let joined = 0;
  let failed = 0;
  const pending = (await listAgents(userId, true)).filter((a) => a.phase === 'provisioning');
  for (const agent of pending) {
    for (let attempt = 0; attempt < SNAPSHOT_ATTEMPTS; attempt += 1) {
      const instance = await getInstance(userId, true);
      if (!instance || instance.status === 'provisioning') break;
      if (instance.status === 'error') {
        const reason = instance.lastError ?? failureReason;
        if (await failAgent(userId, agent.id, reason)) {
          failed += 1;
          await recordLifecycleEvent(userId, {
            type: 'agent.error',
            cause: 'provisioner',
            agentId: agent.id,
            status: 'error',
            reason,
            operationId: instance.operationId,
          });
        }
        break;
      }
      if (await markAgentReady(userId, agent.id, instance.status)) {
        joined += 1;
        if (instance.status === 'running')
          await recordLifecycleEvent(userId, {
            type: 'agent.running',
            cause: 'provisioner',
            agentId: agent.id,
            status: instance.status,
            operationId: instance.operationId,
          });
        break;
      }
      const now = await getAgent(userId, agent.id, true);
      if (now?.phase !== 'provisioning') break;
    }
  }
  return { joined, failed };
}

/** Pages of the sparse `provisioning` listing entered before `enteredBefore` (items, or only their count). */
async function* provisioningSincePages(enteredBefore: Date, select?: 'COUNT') {
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :p AND gsi1sk < :before',
        ExpressionAttributeValues: { ':p': keys.provisioningPartition, ':before': enteredBefore.toISOString() },
        Select: select,
        ExclusiveStartKey: startKey,
      }),
    );
    yield out;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}

/**
 * How many instances have been in `provisioning` since before `enteredBefore` (the heartbeat's
 * stuck-launch metric). Reads the sparse listing only, so the cost follows the launches under way.
 */
export async function countStuckInProvisioning(enteredBefore: Date): Promise<number> {
  let count = 0;
  for await (const page of provisioningSincePages(enteredBefore, 'COUNT')) count += page.Count ?? 0;
  return count;
}

/** The instances in `provisioning` since before `enteredBefore` (the stranded-work reconciler), from the sparse listing. */
export async function instancesProvisioningSince(enteredBefore: Date): Promise<InstanceRecord[]> {
  const found: InstanceRecord[] = [];
  for await (const page of provisioningSincePages(enteredBefore)) found.push(...((page.Items ?? []) as InstanceRecord[]));
  return found;
}
