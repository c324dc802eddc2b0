/**
 * Domain errors of the model layer. http maps them to status codes and `{error, code}`
 * bodies (http/domain-errors.ts); nothing here knows HTTP.
 */

export class AiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** No recognised paid plan on the account (`PLAN_REQUIRED`) or no active subscription (`SUBSCRIPTION_REQUIRED`). */
export class PlanRequiredError extends AiError {}

/** The plan does not include the model. */
export class ModelRestrictedError extends AiError {
  constructor(
    readonly model: string,
    readonly allowedModels: readonly string[],
  ) {
    super('MODEL_RESTRICTED', `the account's plan does not include ${model}`);
  }
}

/** Neither the plan's included allowance nor the credit balance covers the call. */
export class InsufficientCreditsAiError extends AiError {
  constructor() {
    super('INSUFFICIENT_CREDITS', "the plan's included model usage and the credit balance are used up; buy credits or bring your own key");
  }
}

/** A monthly spending cap of the account or the calling agent is reached (issue 22). */
export class BudgetExceededError extends AiError {
  constructor(readonly scope: string) {
    super('BUDGET_EXCEEDED', `the monthly spending cap of ${scope === 'ACCOUNT' ? 'the account' : 'this agent'} is reached; raise it to go on`);
  }
}

/** The model id is not in the catalogue. */
export class UnknownModelError extends AiError {
  constructor(readonly model: string) {
    super('UNKNOWN_MODEL', `no model ${model} in the catalogue`);
  }
}

/** No configured provider can serve the model (or no model fits the task). */
export class NoModelAvailableError extends AiError {
  constructor(message: string) {
    super('NO_MODELS', message);
  }
}

/** The request cannot be sent as asked (prompt over the context window). */
export class ModelRequestError extends AiError {}

/** The provider failed (`PROVIDER_ERROR`) or did not answer in time (`PROVIDER_TIMEOUT`). */
export class ProviderFailureError extends AiError {
  constructor(
    code: 'PROVIDER_ERROR' | 'PROVIDER_TIMEOUT',
    message: string,
    readonly providerStatus?: number,
  ) {
    super(code, message);
  }
}
