import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as keys from '#data/keys';
import { consumeSingleUse, issueSingleUse } from '#data/single-use';
import { getGlobal } from '#data/tenant';

const id = () => randomBytes(16).toString('hex');
const NOW = Date.now();
const inTenMinutes = Math.floor(NOW / 1000) + 600;

describe('single-use tokens (data/single-use.ts)', () => {
  it('keeps each purpose under the partition its records always had', async () => {
    const [state, nonce, refresh, challenge] = [id(), id(), id(), id()];
    await issueSingleUse('oauthState', state, { provider: 'codehost' }, inTenMinutes);
    await issueSingleUse('siweNonce', nonce, {}, inTenMinutes);
    await issueSingleUse('socialRefresh', refresh, { userId: 'u_1' }, inTenMinutes);
    await issueSingleUse('mppChallenge', challenge, { status: 'open' }, inTenMinutes);
    expect(await getGlobal(keys.oauthState(state), true)).toMatchObject({ pk: `OAUTHSTATE#${state}`, provider: 'codehost', expiresAt: inTenMinutes });
    expect(await getGlobal(keys.nonce(nonce), true)).toMatchObject({ pk: `NONCE#${nonce}`, expiresAt: inTenMinutes });
    expect(await getGlobal(keys.socialRefresh(refresh), true)).toMatchObject({ pk: `SOCIALREFRESH#${refresh}`, userId: 'u_1' });
    expect(await getGlobal(keys.mppChallenge(challenge), true)).toMatchObject({ pk: `MPPCHALLENGE#${challenge}`, status: 'open' });
  });

  it('gives the record to exactly one of concurrent consumers, then to nobody', async () => {
    const token = id();
    await issueSingleUse('socialRefresh', token, { userId: 'u_2', fid: '7' }, inTenMinutes);
    const taken = await Promise.all(Array.from({ length: 5 }, () => consumeSingleUse<{ userId: string }>('socialRefresh', token, NOW)));
    expect(taken.filter(Boolean)).toEqual([expect.objectContaining({ userId: 'u_2', fid: '7' })]);
    expect(await consumeSingleUse('socialRefresh', token, NOW)).toBeUndefined();
    expect(await getGlobal(keys.socialRefresh(token), true)).toBeUndefined();
  });

  it('refuses an expired token that TTL has not removed yet, and an unknown one', async () => {
    const nonce = id();
    await issueSingleUse('siweNonce', nonce, {}, inTenMinutes);
    expect(await consumeSingleUse('siweNonce', nonce, (inTenMinutes + 1) * 1000)).toBeUndefined();
    expect(await getGlobal(keys.nonce(nonce), true)).toBeDefined();
    expect(await consumeSingleUse('siweNonce', id(), NOW)).toBeUndefined();
  });

  it('takes a token only when the attributes of `match` hold, and leaves it otherwise', async () => {
    const state = id();
    await issueSingleUse('oauthState', state, { provider: 'codehost', codeVerifier: 'v' }, inTenMinutes);
    expect(await consumeSingleUse('oauthState', state, NOW, { provider: 'webid' })).toBeUndefined();
    expect(await consumeSingleUse('oauthState', state, NOW, { provider: 'codehost' })).toMatchObject({ codeVerifier: 'v' });
  });

  it('never replaces a token already issued under the same id', async () => {
    const nonce = id();
    await issueSingleUse('siweNonce', nonce, { createdAt: 'first' }, inTenMinutes);
    await expect(issueSingleUse('siweNonce', nonce, { createdAt: 'second' }, inTenMinutes)).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(await getGlobal(keys.nonce(nonce), true)).toMatchObject({ createdAt: 'first' });
  });
});
