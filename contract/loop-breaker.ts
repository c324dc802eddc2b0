/**
 * Defaults of the loop breaker's thresholds, apart from the autonomy group so the model layer,
 * which applies them on every agent call, does not bundle that group's schemas
 * (docs/architecture.md section 13 gives the reasons for each figure).
 */
export const LOOP_BREAKER_DEFAULTS = { repeatLimit: 8, windowSeconds: 600, spendShare: 0.25, spendWindowMinutes: 15 } as const;
