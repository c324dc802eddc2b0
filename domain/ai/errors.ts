import { DomainError, type FailureKind } from '#platform/errors';

/**
 * Domain errors of the model layer, each of its failure kind; http's one table maps them to status
 * codes and `{error, code}` bodies (http/domain-errors.ts); nothing here knows HTTP. Payment and
 * plan failures carry `success: false`, as the spec's model answers do.
 */

export class AiError extends DomainError {
  declare readonly code: string;
  constructor(code: string, message: string, kind: FailureKind = 'internal', details: Record<string, unknown> = {}) {
    super(kind, message, code, details);
  }
}

const UNPAID = { success: false };

/** No recognised paid plan on the account (`PLAN_REQUIRED`) or no active subscription (`SUBSCRIPTION_REQUIRED`). */
export class PlanRequiredError extends AiError {
  constructor(code: 'PLAN_REQUIRED' | 'SUBSCRIPTION_REQUIRED', message: string) {
    super(code, message, 'paymentRequired', UNPAID);
  }
}

/** The plan does not include the model. */
export class ModelRestrictedError extends AiError {
  constructor(
    readonly model: string,
    readonly allowedModels: readonly string[],
  ) {
    super('MODEL_RESTRICTED', `the account's plan does not include ${model}`, 'forbidden', { ...UNPAID, allowedModels: [...allowedModels] });
  }
}

/** Neither the plan's included allowance nor the credit balance covers the call. */
export class InsufficientCreditsAiError extends AiError {
  constructor() {
    super(
      'INSUFFICIENT_CREDITS',
      "the plan's included model usage and the credit balance are used up; buy credits or bring your own key",
      'paymentRequired',
      UNPAID,
    );
  }
}

/** A monthly spending cap of the account or the calling agent is reached. */
export class BudgetExceededError extends AiError {
  constructor(readonly scope: string) {
    super(
      'BUDGET_EXCEEDED',
      `the monthly spending cap of ${scope === 'ACCOUNT' ? 'the account' : 'this agent'} is reached; raise it to go on`,
      'paymentRequired',
      UNPAID,
    );
  }
}

/** The loop breaker paused the calling agent; its owner resumes it (`POST /api/agents/{id}/loop-breaker/resume`). */
export class AgentLoopPausedError extends AiError {
  constructor() {
    super(
      'AGENT_LOOP_PAUSED',
      'this agent repeated the same calls (or spent too fast) and is paused by the loop breaker; its owner can resume it',
      'paymentRequired',
      UNPAID,
    );
  }
}

/** The model id is not in the catalogue. */
export class UnknownModelError extends AiError {
  constructor(readonly model: string) {
    super('UNKNOWN_MODEL', `no model ${model} in the catalogue`, 'notFound');
  }
}

/** No configured provider can serve the model (or no model fits the task). */
export class NoModelAvailableError extends AiError {
  constructor(message: string) {
    super('NO_MODELS', message, 'notFound');
  }
}

/** The request cannot be sent as asked (prompt over the context window). */
export class ModelRequestError extends AiError {
  constructor(code: string, message: string) {
    super(code, message, 'invalid');
  }
}

/** The provider failed (`PROVIDER_ERROR`) or did not answer in time (`PROVIDER_TIMEOUT`). */
export class ProviderFailureError extends AiError {
  constructor(
    code: 'PROVIDER_ERROR' | 'PROVIDER_TIMEOUT',
    message: string,
    readonly providerStatus?: number,
    /** Set when the call may move to the next model of its chain: why this one failed. */
    readonly retryCause?: string,
  ) {
    super(code, message);
  }
}
