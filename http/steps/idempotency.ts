import type { EnvelopeRecord } from '#platform/crypto/envelope';
import type { AuthContext } from '#domain/auth/authenticate';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '#data/idempotency';
import { HttpError } from '../errors';
import type { ApiResult, OperationContext } from './request-state';
import { baseHeaders } from './result';

export interface AnswerSealer {
  seal(userId: string, body: string): Promise<EnvelopeRecord>;
  open(userId: string, sealed: EnvelopeRecord): Promise<string>;
}

/** Printable ASCII without spaces, as the IETF Idempotency-Key draft's clients send (UUIDs, ULIDs). */
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Answers above this are not kept (DynamoDB items stop at 400 KB); the key is released instead. */
const MAX_STORED_ANSWER_BYTES = 300_000;

/**
 * The credential a stored answer is bound to. The answer is returned before the operation runs, so
 * the operation's own credential rules (session-only routes, fresh sessions) never see a replay:
 * binding it to the very credential that earned it keeps those rules whole.
 */
export const idempotencyCredential = (auth: Pick<AuthContext, 'via' | 'apiKeyId' | 'sessionId'>) =>
  auth.via === 'apiKey' ? `apiKey:${auth.apiKeyId}` : `session:${auth.sessionId}`;

/** What must match for a replay: the path parameters (the resource) and the raw body. */
export const idempotencyFingerprint = (params: Record<string, unknown> | undefined, rawBody: string) => {
  const sorted = Object.entries(params ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([sorted, rawBody]);
};

/**
 * Idempotency-Key for the routes that set `policy.idempotent` (contract): the first completed answer is
 * kept under the caller's partition, the operation, the credential and the key for 24 h and replayed
 * for a repeat by that credential; another request (path parameters or body) under the same key is
 * refused (422), as is a repeat while the first still runs (409).
 * Failures keep nothing, so a retry with the same key runs again. Without the header nothing changes.
 */
export async function idempotently(ctx: OperationContext, sealer: AnswerSealer | undefined, run: () => Promise<ApiResult>): Promise<ApiResult> {
  const key = ctx.headers['idempotency-key'];
  if (!ctx.route.policy?.idempotent || key === undefined || !ctx.auth) return run();
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new HttpError(400, 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces', 'INVALID_IDEMPOTENCY_KEY');
  }
  const { userId } = ctx.auth;
  const operation = ctx.route.operation;
  const credential = idempotencyCredential(ctx.auth);
  const claim = await claimIdempotencyKey(
    userId,
    operation,
    credential,
    key,
    idempotencyFingerprint(ctx.params as Record<string, unknown> | undefined, ctx.rawBody),
  );
  if (claim.outcome === 'reused') {
    throw new HttpError(422, 'this Idempotency-Key was used with a different request (path or body)', 'IDEMPOTENCY_KEY_REUSED');
  }
  if (claim.outcome === 'in-progress') {
    throw new HttpError(409, 'a request with this Idempotency-Key is still being processed; retry later', 'IDEMPOTENCY_IN_PROGRESS');
  }
  if (claim.outcome === 'replay') {
    const { statusCode, sealedBody, contentType } = claim.answer;
    const body = sealedBody && sealer ? await sealer.open(userId, sealedBody) : claim.answer.body;
    const headers = { ...baseHeaders(ctx.requestId), ...(contentType ? { 'content-type': contentType } : {}), 'idempotent-replayed': 'true' };
    return { statusCode, headers, ...(body !== undefined ? { body } : {}) };
  }
  let result: ApiResult;
  try {
    result = await run();
  } catch (err) {
    await releaseIdempotencyKey(userId, operation, credential, key);
    throw err;
  }
  const status = result.statusCode ?? 200;
  const body = typeof result.body === 'string' ? result.body : undefined;
  // A streamed answer has no body to keep, so only JSON-like bodies (or a 204) are stored.
  const storable = body !== undefined ? Buffer.byteLength(body) <= MAX_STORED_ANSWER_BYTES : status === 204;
  if (status < 300 && !result.cookies && storable) {
    const contentType = result.headers?.['content-type'];
    const kept = ctx.route.policy?.secretAnswer && body !== undefined ? { sealedBody: await sealer!.seal(userId, body) } : { body };
    await completeIdempotencyKey(userId, operation, credential, key, {
      statusCode: status,
      ...kept,
      contentType: typeof contentType === 'string' ? contentType : undefined,
    });
  } else await releaseIdempotencyKey(userId, operation, credential, key);
  return result;
}
