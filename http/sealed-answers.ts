import { decrypt, encrypt } from '#platform/crypto/envelope';
import type { AnswerSealer } from './steps/idempotency';

/** Sealed to the account under this purpose: a replayed answer opens only for the caller who got it. */
const context = (userId: string) => ({ userId, purpose: 'idempotent-answer' });

/** Envelope encryption of the answers kept for Idempotency-Key replay that carry a secret (a new API key). */
export const envelopeSealer: AnswerSealer = {
  seal: (userId, body) => encrypt(body, context(userId)),
  open: async (userId, sealed) => (await decrypt(sealed, context(userId))).toString('utf8'),
};
