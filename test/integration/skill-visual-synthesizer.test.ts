import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { skill as fileManager } from '#functions/http/skills/skills/file-manager';
import { skill } from '#functions/http/skills/skills/visual-synthesizer';
import { fileStorage, objectKeyOf } from '#adapters/file-storage';
import { billingPeriod } from '#domain/ai/metering';
import { adjustCredits } from '#domain/billing/credits';
import { reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { createUser, getUser } from '#data/users';
import { startLocalPagesServer } from '../helpers/local-pages-server';
import { FAKE_IMAGE_USAGE, fakeImageBytes, startFakeImageServer } from '../helpers/fake-image-server';
import { runSkill } from '../helpers/skill-call';
import { subscribe } from './agents-helpers';

let fake: Awaited<ReturnType<typeof startFakeImageServer>>;

let closeServer: () => Promise<void>;

beforeAll(async () => {
  fake = await startFakeImageServer();
  // The local server's pages answer the signed download URLs of the local file storage.
  const pages = await startLocalPagesServer();
  closeServer = pages.close;
  reloadConfig({
    OPENAI_API_KEY: 'sk-test-images',
    OPENAI_BASE_URL: fake.baseUrl,
    MODEL_API_BASE_URL: undefined,
    APP_URL: pages.base,
  });
});
afterAll(async () => {
  reloadConfig({ OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined, APP_URL: undefined });
  await Promise.all([fake.close(), closeServer()]);
});
beforeEach(() => fake.failWith(undefined));

async function subscriber(plan: string | null = 'solo', credits = 0) {
  const { userId } = await createUser({ email: `${randomUUID()}@example.com` });
  if (plan) await subscribe(userId, plan, 'active');
  if (credits) await adjustCredits(userId, credits, 'purchase');
  return userId;
}

const usageItems = (userId: string) => tenant(userId).queryAll<Record<string, unknown>>(keys.modelUsagePrefix);
const allowanceUsed = async (userId: string) => (await tenant(userId).get<{ used: number }>(keys.modelAllowance(userId, billingPeriod(undefined).start)))?.used;

// gpt-image-1 at 5 USD per million prompt tokens and 40 per million image tokens: 50 and 1056 tokens.
const COST_USD = (50 * 5 + 1056 * 40) / 1e6; // 0.04249
const CREDITS = 43; // 0.04249 USD at 0.001 USD a credit, rounded up

describe('visual-synthesizer', () => {
  it('generates an image from prompt and style, stores it with the file storage, returns it as a URL and meters the call', async () => {
    const userId = await subscriber('solo');
    const { status, body } = await runSkill(skill, userId, { prompt: 'Neon skyline over a crowded dance floor', style: 'synthwave' });
    expect(status).toBe(200);
    const sentPrompt = 'Neon skyline over a crowded dance floor\n\nStyle: synthwave';
    expect(fake.requests.at(-1)).toEqual({
      authorization: 'Bearer sk-test-images',
      body: expect.objectContaining({ model: 'gpt-image-1', prompt: sentPrompt, n: 1, size: '1024x1024' }),
    });

    const expected = fakeImageBytes(sentPrompt);
    expect(body.image).toMatchObject({ contentType: 'image/png', size: expected.length, folder: 'visual-synthesizer' });
    // A URL fetched over HTTP with no session: the image's bytes, signed for this one file until it expires.
    expect(body.image.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/local-files\/download\?/);
    expect(Date.parse(body.image.urlExpiresAt)).toBeGreaterThan(Date.now());
    const fetched = await fetch(body.image.url);
    expect([fetched.status, fetched.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect(Buffer.from(await fetched.arrayBuffer())).toEqual(expected);
    expect(await fileStorage().get(objectKeyOf(userId, body.image.fileId))).toEqual(expected);
    const listed = await runSkill(fileManager, userId, { action: 'list', folder: 'visual-synthesizer' });
    expect(listed.body).toMatchObject({ count: 1, totalBytes: expected.length, files: [{ fileId: body.image.fileId }] });

    expect(body).toMatchObject({
      model: 'openai/gpt-image-1',
      usage: { promptTokens: FAKE_IMAGE_USAGE.input_tokens, completionTokens: FAKE_IMAGE_USAGE.output_tokens, totalTokens: 1106 },
      creditsCharged: 0,
    });
    expect(body.costUsd).toBeCloseTo(COST_USD, 10);
    const [usage, ...more] = await usageItems(userId);
    expect(more).toEqual([]);
    expect(usage).toMatchObject({ model: 'openai/gpt-image-1', promptTokens: 50, completionTokens: 1056, calls: 1, credits: 0 });
    expect(usage!.costUsd as number).toBeCloseTo(COST_USD, 10);
    // Within the plan's included spend: the allowance carries the call's 43 credits.
    expect(await allowanceUsed(userId)).toBe(CREDITS);
  });

  it("another user's URL, a changed key, a forged signature or an expired URL reads nothing", async () => {
    const [owner, other] = [await subscriber('solo'), await subscriber('solo')];
    const mine = (await runSkill(skill, owner, { prompt: 'Cover art, owner' })).body.image;
    const theirs = (await runSkill(skill, other, { prompt: 'Cover art, other' })).body.image;
    expect((await fetch(theirs.url)).status).toBe(200);
    // The other user's own signed URL, pointed at the owner's file: the signature covers the key.
    const swapped = new URL(theirs.url);
    swapped.searchParams.set('key', objectKeyOf(owner, mine.fileId));
    const refused = await fetch(swapped);
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([403, 'SIGNATURE_MISMATCH']);
    const forged = new URL(mine.url);
    forged.searchParams.set('signature', '0'.repeat(64));
    expect((await fetch(forged)).status).toBe(403);
    const longer = new URL(mine.url);
    longer.searchParams.set('expires', String(Number(longer.searchParams.get('expires')) + 3600));
    expect((await fetch(longer)).status).toBe(403);
    const old = (await runSkill(skill, owner, { prompt: 'Old art' }, { now: new Date(Date.now() - 2 * 3600_000) })).body.image;
    const expired = await fetch(old.url);
    expect([expired.status, ((await expired.json()) as { code: string }).code]).toEqual([403, 'URL_EXPIRED']);
  });

  it('past the included spend the credits pay for it; a provider failure gives the reservation back and stores nothing', async () => {
    const userId = await subscriber('label', 500);
    await tenant(userId).put({ ...keys.modelAllowance(userId, billingPeriod(undefined).start), used: 2_000, included: 2_000 });
    const paid = await runSkill(skill, userId, { prompt: 'Poster for a warehouse rave' });
    expect(paid.body.creditsCharged).toBe(CREDITS);
    expect((await getUser(userId, true))!.credits).toBe(500 - CREDITS);

    fake.failWith(500);
    const failed = await runSkill(skill, userId, { prompt: 'This one fails' });
    expect(failed).toMatchObject({ status: 500, body: { code: 'PROVIDER_ERROR' } });
    expect((await getUser(userId, true))!.credits).toBe(500 - CREDITS);
    expect((await runSkill(fileManager, userId, { action: 'list' })).body.count).toBe(1);
    expect((await usageItems(userId)).reduce((n, i) => n + (i.calls as number), 0)).toBe(1);
  });

  it('needs a plan and free storage before any provider call', async () => {
    const before = fake.requests.length;
    expect(await runSkill(skill, await subscriber(null), { prompt: 'x' })).toMatchObject({ status: 402, body: { code: 'PLAN_REQUIRED' } });
    const full = await subscriber('solo');
    await tenant(full).put({ ...keys.fileStorageUsage(full), usedBytes: 2 * 1024 ** 3 });
    expect(await runSkill(skill, full, { prompt: 'x' })).toMatchObject({ status: 429, body: { code: 'STORAGE_QUOTA_EXCEEDED' } });
    expect(fake.requests.length).toBe(before);
  });

  it('refuses invalid bodies with 400', async () => {
    const userId = await subscriber('solo');
    for (const body of [
      {},
      { prompt: '' },
      { prompt: 'x'.repeat(2001) },
      { prompt: 'x', style: 7 },
      { prompt: 'x', size: '10x10' },
      { prompt: 'x', colour: 'red' },
      { action: 'paint', prompt: 'x' },
    ])
      expect((await runSkill(skill, userId, body)).status, JSON.stringify(body)).toBe(400);
  });
});
