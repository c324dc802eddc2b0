import { describe, expect, it } from 'vitest';
import { AccountPlan, LegacyTier, PlanName } from '#contract/accounts';
import { GATEWAY_PLUGINS, GATEWAY_PLUGIN_IDS } from '#contract/gateway';
import { ACCOUNT_PLANS, isAccountPlan, LEGACY_TIERS, PLAN_NAMES } from '#contract/plan-names';

/** Constants that code outside a contract reads from a small module (no contract in every bundle) stay in step with the contract. */
describe('contract constants modules', () => {
  it('names the gateway plugins the gateway contract lists', () => {
    expect(GATEWAY_PLUGINS.map((p) => p.id)).toEqual([...GATEWAY_PLUGIN_IDS]);
  });

  it('names the plans and tiers the accounts contract accepts', () => {
    expect([...PLAN_NAMES]).toEqual(PlanName().options);
    expect([...LEGACY_TIERS]).toEqual(LegacyTier().options);
    expect([...ACCOUNT_PLANS]).toEqual(AccountPlan().options);
    expect(isAccountPlan('solo')).toBe(true);
    expect(isAccountPlan('free')).toBe(false);
    expect(isAccountPlan(null)).toBe(false);
  });
});
