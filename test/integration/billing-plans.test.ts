import { describe, expect, it } from 'vitest';
import { accessFrom } from '#domain/billing/entitlements';
import { ADMIN_AGENT_LIMIT, agentLimitForPlan, ALL_MODELS, PLAN_NAMES, PLANS } from '#domain/billing/plans';

/** The plan table of spec 2.16 and the legacy provisioning tiers, as the one catalogue answers them. */
describe('plan catalogue', () => {
  it.each([
    ['label', 29, 1, 3, 100, '8 GB', 2],
    ['solo', 79, 3, 10, 500, '2 GB', 4],
    ['collective', 199, 10, 25, 2000, '4 GB', 6],
  ] as const)('%s: $%i, %i agents, %i skills, %i A2A/day, %s, %i models', (plan, price, agents, skills, a2a, memory, models) => {
    expect(PLANS[plan]).toMatchObject({ priceUsdPerMonth: price, agents, skills, a2aMessagesPerDay: a2a, memory });
    expect(PLANS[plan].models).toHaveLength(models);
  });

  it('network: $499, 100 agents, 100 skills, 10,000 A2A/day, 16 GB, every model', () => {
    expect(PLANS.network).toMatchObject({ priceUsdPerMonth: 499, agents: 100, skills: 100, a2aMessagesPerDay: 10000, memory: '16 GB' });
    expect([...PLANS.network.models].sort()).toEqual([...ALL_MODELS].sort());
  });

  it('each higher plan allows at least what the lower one does, and every model id is <vendor>/<model>', () => {
    for (let i = 1; i < PLAN_NAMES.length; i++) {
      const lower = PLANS[PLAN_NAMES[i - 1]!];
      const higher = PLANS[PLAN_NAMES[i]!];
      expect(higher.agents).toBeGreaterThanOrEqual(lower.agents);
      expect(higher.skills).toBeGreaterThanOrEqual(lower.skills);
      expect(higher.a2aMessagesPerDay).toBeGreaterThanOrEqual(lower.a2aMessagesPerDay);
      expect(higher.models).toEqual(expect.arrayContaining([...lower.models]));
    }
    for (const m of ALL_MODELS) expect(m).toMatch(/^[a-z0-9-]+\/[a-z0-9.-]+$/);
  });

  it('legacy tiers: starter 1, pro 3, enterprise 100, anything else 1', () => {
    expect(['starter', 'pro', 'enterprise', 'free', 'gold', null, undefined].map((p) => agentLimitForPlan(p))).toEqual([1, 3, 100, 1, 1, 1, 1]);
  });

  it('admins get the elevated agent limit and network model access without any plan', () => {
    const admin = accessFrom({ userId: 'u_admin', isAdmin: true, isTester: false }, undefined);
    expect(admin).toMatchObject({ agentLimit: ADMIN_AGENT_LIMIT, subscriptionActive: false, limits: PLANS.network });
    expect(admin.models).toEqual(ALL_MODELS);
    const user = accessFrom({ userId: 'u_user', isAdmin: false, isTester: false }, undefined);
    expect(user).toMatchObject({ agentLimit: 1, plan: null, models: [] });
    expect(user.limits).toBeUndefined();
  });
});
