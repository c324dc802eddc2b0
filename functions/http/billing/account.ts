import type { AuthContext } from '#domain/auth/authenticate';
import { creditPacks } from '#domain/billing/credit-packs';
import { billingPeriod } from '#domain/ai/metering';
import { modelUsageReport } from '#domain/ai/usage-report';
import { creditLedger, type CreditEntry } from '#domain/billing/credits';
import { accessFrom, getSubscription, type AccountAccess } from '#domain/billing/entitlements';
import { PLAN_NAMES, PLANS } from '#domain/billing/plans';
import { AccountPlan } from '#contract/accounts';
import { SubscriptionStatus } from '#contract/billing';
import { getUser } from '#data/users';
import { byokState } from './byok';

/** The account's billing picture: read from storage only, never from anything the client sends. */

const NO_LIMITS = { agents: 0, skills: 0, a2aPerDay: 0, memory: '0 GB', models: [] as string[] };

function limitsOf(access: AccountAccess) {
  const l = access.limits;
  if (!l) return NO_LIMITS;
  return { agents: l.agents, skills: l.skills, a2aPerDay: l.a2aMessagesPerDay, memory: l.memory, models: [...access.models] };
}

/** Answers only the values the contract names: an unrecognised stored value reads as none. */
const shownPlan = (plan: string | null | undefined) => (AccountPlan().safeParse(plan).success ? plan! : 'none');
const shownStatus = (status: string | undefined) => (SubscriptionStatus().safeParse(status).success ? status! : 'none');

async function balanceOf(userId: string): Promise<number> {
  return (await getUser(userId, true))?.credits ?? 0;
}

export async function billingOverview(auth: AuthContext) {
  const [profile, sub, byok] = await Promise.all([getUser(auth.userId, true), getSubscription(auth.userId), byokState(auth.userId)]);
  const access = accessFrom(auth, sub);
  return {
    plan: shownPlan(sub?.plan ?? profile?.plan),
    status: shownStatus(sub?.status),
    active: access.isAdmin || access.subscriptionActive,
    currentPeriodEnd: sub?.currentPeriodEnd ?? null,
    cancelAtPeriodEnd: sub?.cancelAtPeriodEnd ?? false,
    credits: profile?.credits ?? 0,
    extraStorageGb: sub?.extraStorageGb ?? 0,
    byok,
    limits: limitsOf(access),
    creditPacks: Object.entries(creditPacks()).map(([price, credits]) => ({ price, credits })),
    plans: PLAN_ON_SALE,
  };
}

/** The plan table as the console offers it: the client holds no prices of its own. */
const PLAN_ON_SALE = PLAN_NAMES.map((plan) => ({
  plan,
  price: { amount: PLANS[plan].priceUsdPerMonth, currency: 'USD', interval: 'month' as const },
  agents: PLANS[plan].agents,
  skills: PLANS[plan].skills,
}));

export async function creditsPage(userId: string, limit: number, cursor?: string) {
  const [balance, page] = await Promise.all([balanceOf(userId), creditLedger(userId, { limit, cursor })]);
  return { balance, currency: 'credits' as const, ledger: page.entries, cursor: page.cursor ?? null };
}

const LEDGER_PAGE = 100;

/** Ledger entries of the period: pages newest first, stopping at the first entry before it. */
async function entriesSince(userId: string, start: string): Promise<Pick<CreditEntry, 'delta' | 'reason'>[]> {
  const out: Pick<CreditEntry, 'delta' | 'reason'>[] = [];
  let cursor: string | undefined;
  do {
    const page = await creditLedger(userId, { limit: LEDGER_PAGE, cursor });
    for (const e of page.entries) {
      if (e.createdAt < start) return out;
      out.push(e);
    }
    cursor = page.cursor;
  } while (cursor);
  return out;
}

export async function usageOf(auth: AuthContext, now = new Date()) {
  const [sub, balance] = await Promise.all([getSubscription(auth.userId), balanceOf(auth.userId)]);
  const period = billingPeriod(sub, now);
  const entries = await entriesSince(auth.userId, period.start);
  const usage = entries.filter((e) => e.reason === 'usage');
  const access = accessFrom(auth, sub);
  const models = await modelUsageReport(auth.userId, period, access.isAdmin ? 'network' : (access.limits?.name ?? null));
  return {
    usage: {
      periodStart: period.start,
      periodEnd: period.end,
      ...models,
      credits: {
        balance,
        spent: -usage.reduce((sum, e) => sum + Math.min(e.delta, 0), 0),
        added: entries.reduce((sum, e) => sum + Math.max(e.delta, 0), 0),
        usageEntries: usage.length,
      },
      limits: limitsOf(access),
    },
  };
}
