/**
 * The plan names as plain constants, for code outside the accounts contract (data/users.ts,
 * platform/config.ts): importing them from ./accounts would put that contract, and its schema
 * building, into every function that reads an account (`keys` among them).
 */
export const PLAN_NAMES = ['label', 'solo', 'collective', 'network'] as const;
export const LEGACY_TIERS = ['starter', 'pro', 'enterprise'] as const;
export const ACCOUNT_PLANS = ['none', ...PLAN_NAMES, ...LEGACY_TIERS] as const;
export type AccountPlanName = (typeof ACCOUNT_PLANS)[number];

export const isAccountPlan = (value: unknown): value is AccountPlanName => (ACCOUNT_PLANS as readonly unknown[]).includes(value);
