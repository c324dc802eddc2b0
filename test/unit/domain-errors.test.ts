import { describe, expect, it } from 'vitest';
import { errorBodyOf, httpErrorOf, STATUS_OF_KIND } from '#http/domain-errors';
import { HttpError } from '#http/errors';
import { DomainError, FAILURE_KINDS, limitReached } from '#platform/errors';

describe('the one table from failure kinds to HTTP answers', () => {
  it('gives every failure kind an error status of its own, and names no other kind', () => {
    expect(Object.keys(STATUS_OF_KIND).sort()).toEqual([...FAILURE_KINDS].sort());
    for (const kind of FAILURE_KINDS) {
      expect(STATUS_OF_KIND[kind], kind).toBeGreaterThanOrEqual(400);
      expect(STATUS_OF_KIND[kind], kind).toBeLessThan(600);
    }
    expect(new Set(Object.values(STATUS_OF_KIND)).size).toBe(FAILURE_KINDS.length);
  });

  it('keeps the statuses clients already get for each kind', () => {
    expect(STATUS_OF_KIND).toEqual({
      invalid: 400,
      unauthenticated: 401,
      paymentRequired: 402,
      forbidden: 403,
      notFound: 404,
      conflict: 409,
      gone: 410,
      unprocessable: 422,
      limitReached: 429,
      internal: 500,
      upstreamFailed: 502,
      unavailable: 503,
    });
  });

  it('answers a failure with its status, its details as body fields and no header unless it has a hint', () => {
    const answer = httpErrorOf(new DomainError('gone', 'this checkout is retired', 'GONE', { use: '/api/card/checkout' }));
    expect(answer).toMatchObject({ status: 410, message: 'this checkout is retired', code: 'GONE', extra: { use: '/api/card/checkout' }, headers: {} });
  });

  it('turns a retry hint into Retry-After whatever the kind, without adding it to the body', () => {
    const limited = httpErrorOf(limitReached('too many failed sign-ins', 'RATE_LIMITED', { retryAfter: 42 }, { retryAfterSeconds: 42 }));
    expect(limited).toMatchObject({ status: 429, code: 'RATE_LIMITED', extra: { retryAfter: 42 }, headers: { 'retry-after': '42' } });
    expect(Object.keys(limited!.extra)).toEqual(['retryAfter']);
    const unavailable = httpErrorOf(new DomainError('unavailable', 'try later', 'BUSY', {}, { retryAfterSeconds: 0 }));
    expect(unavailable).toMatchObject({ status: 503, extra: {}, headers: { 'retry-after': '0' } });
  });

  it('leaves the code out where the failure has none, as the gateway no_plugin answer does', () => {
    const noPlugin = httpErrorOf(new DomainError('upstreamFailed', 'no_plugin', undefined, { message: 'no plugin named "x"' }));
    expect(noPlugin).toMatchObject({ status: 502, message: 'no_plugin', extra: { message: 'no plugin named "x"' } });
    expect(noPlugin!.code).toBeUndefined();
  });
});

describe('a domain failure keeps what caused it', () => {
  it('passes `cause` through to the Error, for the logs, and leaves it out of the answer', () => {
    const underneath = new Error('socket hang up');
    const failure = new DomainError('unavailable', 'the chain cannot be reached', 'CHAIN_UNAVAILABLE', {}, {}, { cause: underneath });
    expect(failure.cause).toBe(underneath);
    expect(failure).toBeInstanceOf(Error);
    expect(httpErrorOf(failure)).toMatchObject({ status: 503, code: 'CHAIN_UNAVAILABLE', extra: {} });
  });
});

describe('the model layer failures through the one table', () => {
  it('answers plan and payment failures 402 and a model outside the plan 403, with success: false', async () => {
    const ai = await import('#domain/ai/errors');
    expect(httpErrorOf(new ai.PlanRequiredError('SUBSCRIPTION_REQUIRED', 'subscribe'))).toMatchObject({
      status: 402,
      code: 'SUBSCRIPTION_REQUIRED',
      extra: { success: false },
    });
    expect(httpErrorOf(new ai.InsufficientCreditsAiError())).toMatchObject({ status: 402, code: 'INSUFFICIENT_CREDITS', extra: { success: false } });
    expect(httpErrorOf(new ai.BudgetExceededError('ACCOUNT'))).toMatchObject({ status: 402, code: 'BUDGET_EXCEEDED', extra: { success: false } });
    const restricted = httpErrorOf(new ai.ModelRestrictedError('big-model', ['small-model']));
    expect(restricted).toMatchObject({ status: 403, code: 'MODEL_RESTRICTED' });
    expect(restricted!.extra).toEqual({ success: false, allowedModels: ['small-model'] });
  });

  it('answers an unknown or unserved model 404, a request that cannot be sent 400 and a provider failure 500, without success', async () => {
    const ai = await import('#domain/ai/errors');
    const answers = [
      new ai.UnknownModelError('nope'),
      new ai.NoModelAvailableError('no provider'),
      new ai.ModelRequestError('CONTEXT_WINDOW_EXCEEDED', 'too long'),
      new ai.ProviderFailureError('PROVIDER_TIMEOUT', 'slow', 504),
    ].map((err) => httpErrorOf(err)!);
    expect(answers.map((a) => [a.status, a.code, a.extra])).toEqual([
      [404, 'UNKNOWN_MODEL', {}],
      [404, 'NO_MODELS', {}],
      [400, 'CONTEXT_WINDOW_EXCEEDED', {}],
      [500, 'PROVIDER_TIMEOUT', {}],
    ]);
  });
});

describe('the error shape a contract group speaks', () => {
  it('keeps the platform’s {error, code, ...details} by default, with the route’s own fields', () => {
    const http = httpErrorOf(new DomainError('forbidden', 'no', 'MODEL_RESTRICTED', { allowedModels: ['a/b'] }))!;
    expect(errorBodyOf(http, 'platform', { success: false })).toEqual({ success: false, allowedModels: ['a/b'], error: 'no', code: 'MODEL_RESTRICTED' });
  });

  it('answers OpenAI’s {error: {message, type, code, param}} for an openai group: type by status, the code in lower case, the model as param', () => {
    const http = httpErrorOf(new DomainError('forbidden', 'not in your plan', 'MODEL_RESTRICTED', { success: false, allowedModels: ['a/b'] }))!;
    expect(errorBodyOf(http, 'openai')).toEqual({
      error: { message: 'not in your plan', type: 'permission_error', code: 'model_restricted', param: 'model', allowedModels: ['a/b'] },
    });
    const types = [400, 401, 402, 403, 404, 409, 429, 500, 502, 503].map(
      (status) => (errorBodyOf(new HttpError(status, 'x', 'X'), 'openai').error as { type: string }).type,
    );
    expect(types).toEqual([
      'invalid_request_error',
      'authentication_error',
      'insufficient_quota',
      'permission_error',
      'not_found_error',
      'invalid_request_error',
      'rate_limit_error',
      'server_error',
      'server_error',
      'server_error',
    ]);
  });

  it('names the field of the first validation issue, or the one the failure names, as param; none otherwise', () => {
    const invalidBody = new HttpError(400, 'invalid request body', 'VALIDATION_ERROR', { issues: [{ path: 'body.messages.0.role', message: 'bad' }] });
    expect(errorBodyOf(invalidBody, 'openai').error).toMatchObject({ param: 'messages.0.role', code: 'validation_error' });
    const named = httpErrorOf(new DomainError('invalid', 'no tools', 'TOOLS_NOT_SUPPORTED', { param: 'tools' }))!;
    expect(errorBodyOf(named, 'openai').error).toMatchObject({ param: 'tools' });
    expect(errorBodyOf(new HttpError(429, 'too many requests', 'RATE_LIMITED', { retryAfter: 3 }), 'openai').error).toEqual({
      message: 'too many requests',
      type: 'rate_limit_error',
      code: 'rate_limited',
      param: null,
      retryAfter: 3,
    });
  });
});
