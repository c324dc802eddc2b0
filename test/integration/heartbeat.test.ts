import { describe, expect, it } from 'vitest';
import { getHeartbeat } from '#data/heartbeat';
import { call, testSession } from '../helpers/api';

const post = (session: Awaited<ReturnType<typeof testSession>>, body: unknown) => call('POST', '/api/heartbeat', { session, body });

describe('heartbeat settings (spec 4.10, 2.15)', () => {
  it('answers the defaults before anything is saved: 3h, on, never run (the first one once an instance runs)', async () => {
    const user = await testSession();
    const res = await call('GET', '/api/heartbeat', { session: user });
    expect(res.status).toBe(200);
    expect(res.body.heartbeat).toEqual({ frequency: '3h', enabled: true, lastHeartbeat: null, nextHeartbeat: null, idleStopMinutes: null });
    expect(res.body.message).toMatch(/when your instance is running/);
    expect(await getHeartbeat(user.userId)).toBeUndefined();
  });

  it('switching on persists the settings and makes the first heartbeat due at once, in the due index', async () => {
    const user = await testSession();
    const before = Date.now();
    const res = await post(user, { frequency: '30m', enabled: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ frequency: '30m', enabled: true, lastHeartbeat: null });
    expect(Date.parse(res.body.nextHeartbeat)).toBeGreaterThanOrEqual(before - 5);
    expect(Date.parse(res.body.nextHeartbeat)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(res.body.lastUpdated)).toBeGreaterThanOrEqual(before - 5);
    expect(res.body.message).toMatch(/every 30m/);

    const stored = await getHeartbeat(user.userId, true);
    expect(stored).toMatchObject({ frequency: '30m', enabled: true, nextHeartbeat: res.body.nextHeartbeat, gsi1sk: res.body.nextHeartbeat });
    expect(stored!.gsi1pk).toMatch(/^HBDUE#[0-7]$/);

    const read = await call('GET', '/api/heartbeat', { session: user });
    expect(read.body.heartbeat).toEqual({ frequency: '30m', enabled: true, lastHeartbeat: null, nextHeartbeat: res.body.nextHeartbeat, idleStopMinutes: null });
  });

  it('a field left out keeps its stored value; switching off leaves the due index', async () => {
    const user = await testSession();
    await post(user, { frequency: '1d', enabled: true });
    const off = await post(user, { enabled: false });
    expect(off.body).toMatchObject({ frequency: '1d', enabled: false, nextHeartbeat: null });
    const stored = await getHeartbeat(user.userId, true);
    expect(stored!.gsi1pk).toBeUndefined();
    expect(stored!.gsi1sk).toBeUndefined();
    const freq = await post(user, { frequency: '2h' });
    expect(freq.body).toMatchObject({ frequency: '2h', enabled: false, nextHeartbeat: null });
  });

  it('a new frequency while on counts from the last heartbeat, never from the past', async () => {
    const user = await testSession();
    await post(user, { frequency: '1h', enabled: true });
    const res = await post(user, { frequency: '6h' });
    // Never run yet: due at once.
    expect(Date.parse(res.body.nextHeartbeat)).toBeLessThanOrEqual(Date.now());
    expect(res.body.frequency).toBe('6h');
  });

  it.each(['5m', '30m', '3h', '1d', '30d', '720h', '43200m'])('accepts the frequency %s', async (frequency) => {
    const user = await testSession();
    const res = await post(user, { frequency, enabled: true });
    expect(res.status).toBe(200);
    expect(res.body.frequency).toBe(frequency);
  });

  it.each([
    ['4m', 'between 5m and 30d'],
    ['0m', 'whole number'],
    ['31d', 'between 5m and 30d'],
    ['721h', 'between 5m and 30d'],
    ['43201m', 'between 5m and 30d'],
    ['9999999d', 'between 5m and 30d'],
    ['3x', 'whole number'],
    ['1.5h', 'whole number'],
    ['h', 'whole number'],
    ['', 'whole number'],
    ['03h', 'whole number'],
    [' 3h', 'whole number'],
  ])('refuses the frequency %j with 400 and changes nothing', async (frequency, message) => {
    const user = await testSession();
    await post(user, { frequency: '3h', enabled: true });
    const before = await getHeartbeat(user.userId, true);
    const res = await post(user, { frequency, enabled: false });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.issues.map((i: { message: string }) => i.message).join(' ')).toContain(message);
    expect(await getHeartbeat(user.userId, true)).toEqual(before);
  });

  it.each([[{ frequency: 3 }], [{ enabled: 'yes' }], [{ frequency: '3h', userId: 'someone-else' }], [{ lastHeartbeat: '2020-01-01T00:00:00.000Z' }]])(
    'refuses the body %j with 400',
    async (body) => {
      const user = await testSession();
      expect((await post(user, body)).status).toBe(400);
      expect(await getHeartbeat(user.userId, true)).toBeUndefined();
    },
  );

  it('DELETE resets to the defaults (on, 3h from the last heartbeat, never in the past) and keeps lastHeartbeat as history', async () => {
    const user = await testSession();
    await post(user, { frequency: '5m', enabled: true });
    const { tenant } = await import('#data/tenant');
    const keys = await import('#data/keys');
    const ran = '2024-01-01T00:00:00.000Z';
    await tenant(user.userId).update(keys.heartbeat(user.userId), { expression: 'SET lastHeartbeat = :t', values: { ':t': ran } });

    const res = await call('DELETE', '/api/heartbeat', { session: user });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.message).toMatch(/defaults/);
    const read = await call('GET', '/api/heartbeat', { session: user });
    expect(read.body.heartbeat).toMatchObject({ frequency: '3h', enabled: true, lastHeartbeat: ran });
    // Three hours after 2024 is long past: due at once.
    expect(Date.parse(read.body.heartbeat.nextHeartbeat)).toBeLessThanOrEqual(Date.now());
    const stored = await getHeartbeat(user.userId, true);
    expect(stored).toMatchObject({ gsi1sk: read.body.heartbeat.nextHeartbeat });

    await post(user, { enabled: false });
    await call('DELETE', '/api/heartbeat', { session: user });
    expect((await getHeartbeat(user.userId, true))!.enabled).toBe(true);
  });

  it('needs a session, and each user sees only their own settings', async () => {
    expect((await call('GET', '/api/heartbeat')).status).toBe(401);
    expect((await call('POST', '/api/heartbeat', { body: { enabled: true } })).status).toBe(401);
    const a = await testSession();
    const b = await testSession();
    await post(a, { frequency: '5m', enabled: true });
    const other = await call('GET', '/api/heartbeat', { session: b });
    expect(other.body.heartbeat).toEqual({ frequency: '3h', enabled: true, lastHeartbeat: null, nextHeartbeat: null, idleStopMinutes: null });
  });

  it('concurrent changes settle on one consistent record', async () => {
    const user = await testSession();
    const results = await Promise.all(['5m', '10m', '15m', '20m', '25m', '30m'].map((frequency) => post(user, { frequency, enabled: true })));
    for (const r of results) expect(r.status).toBe(200);
    const stored = await getHeartbeat(user.userId, true);
    expect(stored!.version).toBe(6);
    expect(results.map((r) => r.body.frequency)).toContain(stored!.frequency);
    expect(stored!.gsi1sk).toBe(stored!.nextHeartbeat);
  });
});
