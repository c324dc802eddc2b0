import * as z from 'zod/mini';
import { PaymentRefusedError } from './errors';
import { lazySchema } from '#contract/lazy-schema';

/** The `scheme` of our challenges and credentials: the Tempo charge method of the MPP drafts, push mode. */
export const MPP_SCHEME = 'tempo';
/** The drafts' `method` and `intent` of our challenges (draft-tempo-charge-00). */
export const MPP_METHOD = 'tempo';
export const MPP_INTENT = 'charge';

export interface MppCredential {
  scheme: string;
  /** Transaction hash, lower case. */
  transaction: `0x${string}`;
  challengeNonce: string;
  /** The drafts' form echoes the challenge it answers; its realm must be the challenge's. */
  realm?: string;
}

const TxHash = lazySchema(() => z.string().check(z.regex(/^0x[0-9a-fA-F]{64}$/)));
const Nonce = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(128)));

/** Spec 4.12: `{scheme, transaction, challengeNonce}`. */
const SpecCredential = lazySchema(() => z.object({ scheme: z.literal(MPP_SCHEME), transaction: TxHash(), challengeNonce: Nonce() }));

/**
 * The drafts' credential: `{challenge: {id, realm, method, intent, ...}, payload: {type, ...}, source?}`
 * (draft-httpauth-payment-00); of its payloads only the push mode's `{type: "hash", hash}` pays here.
 */
const Echoed = lazySchema(() => z.optional(z.string().check(z.maxLength(256))));
const DraftCredential = lazySchema(() =>
  z.object({
    challenge: z.object({ id: Nonce(), realm: Echoed(), method: Echoed(), intent: Echoed() }),
    payload: z.object({ type: z.optional(z.string().check(z.maxLength(32))), hash: z.optional(z.string()) }),
    source: z.optional(z.string().check(z.maxLength(256))),
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
  if (draft.success) return fromDraft(draft.data);
  throw malformed(`expected {scheme: "${MPP_SCHEME}", transaction: <0x tx hash>, challengeNonce}`);
}

function fromDraft({ challenge, payload }: z.output<ReturnType<typeof DraftCredential>>): MppCredential {
  if (challenge.method !== undefined && challenge.method !== MPP_METHOD) {
    throw new PaymentRefusedError('WRONG_METHOD', `this server takes the "${MPP_METHOD}" payment method, not "${challenge.method.slice(0, 32)}"`);
  }
  if (challenge.intent !== undefined && challenge.intent !== MPP_INTENT) {
    throw new PaymentRefusedError('WRONG_INTENT', `this server takes the "${MPP_INTENT}" intent, not "${challenge.intent.slice(0, 32)}"`);
  }
  if (payload.type === 'transaction') {
    throw new PaymentRefusedError(
      'PULL_MODE_UNSUPPORTED',
      'pull mode (a signed transaction for the server to broadcast) is not offered: broadcast the transfer yourself and send {type: "hash", hash}',
    );
  }
  if (payload.type !== 'hash') throw malformed(`payload type "${String(payload.type).slice(0, 32)}" is not accepted; send {type: "hash", hash}`);
  const hash = TxHash().safeParse(payload.hash);
  if (!hash.success) throw malformed('payload.hash must be a 0x-prefixed 32-byte transaction hash');
  return {
    scheme: MPP_SCHEME,
    transaction: hash.data.toLowerCase() as `0x${string}`,
    challengeNonce: challenge.id,
    ...(challenge.realm !== undefined && { realm: challenge.realm }),
  };
}

export const isPaymentAuthorization = (authorization: string | undefined) => !!authorization && /^payment(\s|$)/i.test(authorization);
