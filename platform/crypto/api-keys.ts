import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'sk_';

/** `sk_` + 32 random bytes, base64url: shown once, stored only as its SHA-256. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

export const looksLikeApiKey = (token: string) => token.startsWith(API_KEY_PREFIX);

/** Enough to recognise a key in a list, too little to guess it. */
export const apiKeyPreview = (key: string) => `${key.slice(0, 7)}…${key.slice(-4)}`;
