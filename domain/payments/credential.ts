import * as z from 'zod/mini';
import { PaymentRefusedError } from './errors';
import { lazySchema } from '#contract/lazy-schema';

/** The `scheme` of our challenges and credentials: the Tempo charge method of the MPP drafts, push mode. */
export const MPP_SCHEME = 'tempo';

export interface MppCredential {
  scheme: string;
  /** Transaction hash, lower case. */
  transaction: `0x${string}`;
  challengeNonce: string;
}

const TxHash = lazySchema(() => z.string().check(z.regex(/^0x[0-9a-fA-F]{64}$/)));
const Nonce = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(128)));

/** Spec 4.12: `{scheme, transaction, challengeNonce}`. */
const SpecCredential = lazySchema(() => z.object({ scheme: z.literal(MPP_SCHEME), transaction: TxHash(), challengeNonce: Nonce() }));

/** The drafts' hash payload: `{challenge: {id}, payload: {type: "hash", hash}}` (draft-tempo-charge-00, push mode). */
const DraftCredential = lazySchema(() =>
  z.object({
    challenge: z.object({ id: Nonce() }),
    payload: z.object({ type: z.literal('hash'), hash: TxHash() }),
  }),
);

const malformed = (why: string) => new PaymentRefusedError('MALFORMED_CREDENTIAL', `malformed payment credential: ${why}`);

function decodeBase64Url(text: string): unknown {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(text)) throw malformed('neither JSON nor base64url');
  try {
    return JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw malformed('the base64url value is not JSON');
  }
}

/**
 * The credential of `Authorization: Payment <credential>`: the spec's JSON, or the same (or the
 * drafts' hash payload) base64url-encoded.
 */
export function parsePaymentAuthorization(authorization: string): MppCredential {
  const value = authorization.replace(/^payment\s+/i, '').trim();
  if (!value) throw malformed('empty');
  let json: unknown;
  if (value.startsWith('{')) {
    try {
      json = JSON.parse(value);
    } catch {
      throw malformed('invalid JSON');
    }
  } else {
    json = decodeBase64Url(value);
  }
  const spec = SpecCredential().safeParse(json);
  if (spec.success)
    return { scheme: spec.data.scheme, transaction: spec.data.transaction.toLowerCase() as `0x${string}`, challengeNonce: spec.data.challengeNonce };
  const draft = DraftCredential().safeParse(json);
  if (draft.success) {
    return { scheme: MPP_SCHEME, transaction: draft.data.payload.hash.toLowerCase() as `0x${string}`, challengeNonce: draft.data.challenge.id };
  }
  throw malformed(`expected {scheme: "${MPP_SCHEME}", transaction: <0x tx hash>, challengeNonce}`);
}

export const isPaymentAuthorization = (authorization: string | undefined) => !!authorization && /^payment(\s|$)/i.test(authorization);
