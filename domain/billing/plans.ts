import { DEFAULT_CATALOGUE } from '#domain/models/catalogue';

/**
 * The plan catalogue (spec 2.16) and the legacy provisioning tiers, in one place. Every group asks
 * domain/billing/entitlements.ts what an account may do; nothing else reads these tables.
 */

export const PLAN_NAMES = ['label', 'solo', 'collective', 'network'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];
export const LEGACY_TIERS = { starter: 1, pro: 3, enterprise: 100 } as const;
export type LegacyTier = keyof typeof LEGACY_TIERS;

export interface PlanLimits {
  name: PlanName;
  priceUsdPerMonth: number;
  agents: number;
  skills: number;
  a2aMessagesPerDay: number;
  /** As the spec's table lists it (label 8 GB, solo 2 GB, collective 4 GB, network 16 GB). */
  memory: string;
  /** Allowed model ids; `network` is every model. */
  models: readonly string[];
  /**
   * Channel skills: how many messaging apps (Telegram, Discord, WhatsApp, Slack) the
   * account may connect, and how many messages its channel skills may send a UTC day. Spec 2.16
   * names neither; these follow the A2A column's steps, and `network` connects every app.
   */
  channelConnections: number;
  channelMessagesPerDay: number;
  /** Scheduled prompts: schedules per account, and runs per account per UTC day. */
  schedules: number;
  scheduledRunsPerDay: number;
  /**
   * Idle auto-stop: minutes without activity after which the sweeper stops the instance,
   * unless the owner set their own (`PUT /api/heartbeat`); 0 = never. Higher plans idle longer.
   */
  idleStopMinutes: number;
  /** Open connections (HTTP requests in flight and websockets) the edge holds to the instance at once; spec 2.16 names none. */
  edgeConnections: number;
  /**
   * Named checkpoints per agent and the largest snapshot one may hold; spec 2.16 names neither. The
   * size stays under what one API answer carries, so a checkpoint can always be read back whole.
   */
  checkpoints: number;
  checkpointMaxBytes: number;
}

/** Each plan's models as the versioned catalogue lists them (domain/ai/catalogue.ts); at run time the catalogue in force decides. */
const catalogueModels = (plan: PlanName) => {
  const r = PLAN_NAMES.indexOf(plan);
  return DEFAULT_CATALOGUE.models.filter((m) => PLAN_NAMES.indexOf(m.minPlan) <= r).map((m) => m.id);
};
export const ALL_MODELS: readonly string[] = DEFAULT_CATALOGUE.models.map((m) => m.id);

const MIB = 1024 * 1024;

export const PLANS: Record<PlanName, PlanLimits> = {
  label: {
    name: 'label',
    priceUsdPerMonth: 29,
    agents: 1,
    skills: 3,
    a2aMessagesPerDay: 100,
    memory: '8 GB',
    models: catalogueModels('label'),
    channelConnections: 1,
    channelMessagesPerDay: 100,
    schedules: 5,
    scheduledRunsPerDay: 100,
    idleStopMinutes: 30,
    edgeConnections: 50,
    checkpoints: 5,
    checkpointMaxBytes: 2 * MIB,
  },
  solo: {
    name: 'solo',
    priceUsdPerMonth: 79,
    agents: 3,
    skills: 10,
    a2aMessagesPerDay: 500,
    memory: '2 GB',
    models: catalogueModels('solo'),
    channelConnections: 2,
    channelMessagesPerDay: 500,
    schedules: 20,
    scheduledRunsPerDay: 1_500,
    idleStopMinutes: 60,
    edgeConnections: 100,
    checkpoints: 10,
    checkpointMaxBytes: 4 * MIB,
  },
  collective: {
    name: 'collective',
    priceUsdPerMonth: 199,
    agents: 10,
    skills: 25,
    a2aMessagesPerDay: 2000,
    memory: '4 GB',
    models: catalogueModels('collective'),
    channelConnections: 3,
    channelMessagesPerDay: 2000,
    schedules: 50,
    scheduledRunsPerDay: 5_000,
    idleStopMinutes: 240,
    edgeConnections: 250,
    checkpoints: 25,
    checkpointMaxBytes: 5 * MIB,
  },
  network: {
    name: 'network',
    priceUsdPerMonth: 499,
    agents: 100,
    skills: 100,
    a2aMessagesPerDay: 10000,
    memory: '16 GB',
    models: ALL_MODELS,
    channelConnections: 4,
    channelMessagesPerDay: 10000,
    schedules: 200,
    scheduledRunsPerDay: 20_000,
    idleStopMinutes: 0,
    edgeConnections: 1000,
    checkpoints: 100,
    checkpointMaxBytes: 5 * MIB,
  },
};

/** Admins are not limited by a plan; this is their "elevated" agent limit. */
export const ADMIN_AGENT_LIMIT = 1000;

export const isPlanName = (p: unknown): p is PlanName => typeof p === 'string' && (PLAN_NAMES as readonly string[]).includes(p);
export const isLegacyTier = (p: unknown): p is LegacyTier => typeof p === 'string' && p in LEGACY_TIERS;

/** Agent limit of an account's stored plan: the catalogue, else the legacy tier, else 1. */
export function agentLimitForPlan(plan: string | null | undefined): number {
  if (isPlanName(plan)) return PLANS[plan].agents;
  if (isLegacyTier(plan)) return LEGACY_TIERS[plan];
  return 1;
}

/** Instance memory of an account without a recognised plan (legacy tiers, none): the smallest plan's. */
export const DEFAULT_INSTANCE_MEMORY_MIB = 2048;

/**
 * Spec 2.16's agent memory column as the instance's memory size in MiB (`8 GB` → 8192): the ECS
 * task size and the local runtime's heap cap, read from the stored plan at each launch.
 */
export function instanceMemoryMiB(plan: string | null | undefined): number {
  if (!isPlanName(plan)) return DEFAULT_INSTANCE_MEMORY_MIB;
  const gb = Number(/^(\d+) GB$/.exec(PLANS[plan].memory)?.[1]);
  return Number.isFinite(gb) && gb > 0 ? gb * 1024 : DEFAULT_INSTANCE_MEMORY_MIB;
}
