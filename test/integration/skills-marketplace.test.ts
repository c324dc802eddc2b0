import { describe, expect, it } from 'vitest';
import { SKILL_CATALOGUE, SKILL_CATEGORIES } from '#contract/skills';
import { createAgent } from '#data/agents';
import { ensureInstance, gatewayToken } from '#data/instances';
import { call, testSession, uniqueIp, type TestSession } from '../helpers/api';
import { subscribe } from './agents-helpers';

async function subscriber(plan = 'solo') {
  const user = await testSession();
  await subscribe(user.userId, plan);
  const agent = await createAgent(user.userId, { name: 'Skill bot', model: 'openai/gpt-4o-mini', config: {}, source: 'api' }, 10);
  return { user, agentId: agent.id };
}

const install = (user: TestSession, skillId: string, agentId: string) =>
  call('POST', '/api/skills', { session: user, body: { skillId, agentId }, ip: uniqueIp() });
const catalogue = async (query = '') => (await call('GET', `/api/skills${query}`)).body;

describe('skills catalogue', () => {
  it('lists all 28 skills with the 9 fields, the 11 categories and the featured skills', async () => {
    const body = await catalogue();
    expect(body.skills).toHaveLength(28);
    expect(body.categories).toEqual([...SKILL_CATEGORIES]);
    for (const s of body.skills)
      expect(Object.keys(s).sort()).toEqual(['author', 'category', 'description', 'downloads', 'featured', 'icon', 'id', 'name', 'rating']);
    expect(body.featured.map((s: { id: string }) => s.id)).toEqual(SKILL_CATALOGUE.filter((s) => s.featured).map((s) => s.name));
  });

  it('filters by category and featured, and refuses an unknown category', async () => {
    const music = await catalogue('?category=music');
    expect(music.skills.map((s: { id: string }) => s.id)).toEqual(['track-archaeologist', 'setlist-oracle', 'demo-submitter']);
    expect((await catalogue('?category=all')).skills).toHaveLength(28);
    const featuredMusic = await catalogue('?category=music&featured=true');
    expect(featuredMusic.skills.map((s: { id: string }) => s.id)).toEqual(['track-archaeologist', 'setlist-oracle']);
    const bad = await call('GET', '/api/skills?category=cooking');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });

  it('counts real installs as downloads and averages stored ratings', async () => {
    const skill = (body: { skills: { id: string; downloads: number; rating: number }[] }) => body.skills.find((s) => s.id === 'demo-submitter')!;
    const before = skill(await catalogue());
    const a = await subscriber();
    const b = await subscriber();
    expect((await install(a.user, 'demo-submitter', a.agentId)).status).toBe(200);
    expect((await install(a.user, 'demo-submitter', a.agentId)).body.installed).toBe(false);
    expect((await install(b.user, 'demo-submitter', b.agentId)).status).toBe(200);
    expect(skill(await catalogue()).downloads).toBe(before.downloads + 2);

    // Ratings of one skill only in this test: 5 then changed to 2 by a, 4 by b → the new ones are 2 and 4.
    const rate = (user: TestSession, rating: number) => call('POST', '/api/skills/guestlist/rating', { session: user, body: { rating } });
    const countBefore = (await rate(a.user, 5)).body.ratingCount;
    const changed = await rate(a.user, 2);
    expect(changed.body.ratingCount).toBe(countBefore);
    const second = await rate(b.user, 4);
    expect(second.body.ratingCount).toBe(countBefore + 1);
    expect((await rate(b.user, 6)).status).toBe(400);
    expect((await call('POST', '/api/skills/no-such-skill/rating', { session: a.user, body: { rating: 3 } })).status).toBe(404);
  });
});

describe('installing skills', () => {
  it("installs on an own agent, lists and uninstalls; refuses unknown skills and other users' agents with 404", async () => {
    const { user, agentId } = await subscriber();
    const other = await subscriber();
    const res = await install(user, 'setlist-oracle', agentId);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, installed: true, skill: { skillId: 'setlist-oracle', agentId, enabled: true, config: {} } });
    expect((await install(user, 'setlist-oracle', other.agentId)).status).toBe(404);
    expect((await install(user, 'not-a-skill', agentId)).status).toBe(404);
    expect((await call('GET', `/api/agents/${other.agentId}/skills`, { session: user })).status).toBe(404);

    const listed = await call('GET', `/api/agents/${agentId}/skills`, { session: user });
    expect(listed.body).toMatchObject({ agentId, count: 1, limit: 10 });
    expect(listed.body.skills.map((s: { skillId: string }) => s.skillId)).toEqual(['setlist-oracle']);

    expect((await call('DELETE', `/api/agents/${agentId}/skills/setlist-oracle`, { session: other.user })).status).toBe(404);
    expect((await call('DELETE', `/api/agents/${agentId}/skills/setlist-oracle`, { session: user })).status).toBe(200);
    expect((await call('DELETE', `/api/agents/${agentId}/skills/setlist-oracle`, { session: user })).status).toBe(404);
    expect((await call('GET', `/api/agents/${agentId}/skills`, { session: user })).body.count).toBe(0);
  });

  it('needs an active subscription', async () => {
    const user = await testSession();
    const agent = await createAgent(user.userId, { name: 'x', model: 'openai/gpt-4o-mini', config: {}, source: 'api' }, 10);
    expect((await install(user, 'guestlist', agent.id)).status).toBe(402);
  });

  it('holds the plan limit per agent under 10 concurrent installs (label: 3), and frees a unit on uninstall', async () => {
    const { user, agentId } = await subscriber('label');
    const names = SKILL_CATALOGUE.slice(0, 10).map((s) => s.name);
    const results = await Promise.all(names.map((n) => install(user, n, agentId)));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(3);
    expect(refused).toHaveLength(7);
    for (const r of refused) expect(r.body).toMatchObject({ code: 'SKILL_LIMIT_REACHED', current: 3, limit: 3 });
    const installed = (await call('GET', `/api/agents/${agentId}/skills`, { session: user })).body;
    expect(installed.count).toBe(3);

    const first = installed.skills[0].skillId;
    expect((await call('DELETE', `/api/agents/${agentId}/skills/${first}`, { session: user })).status).toBe(200);
    const leftOut = names.find((n) => !installed.skills.some((s: { skillId: string }) => s.skillId === n))!;
    expect((await install(user, leftOut, agentId)).status).toBe(200);
    expect((await install(user, first, agentId)).status).toBe(429);
  });
});

describe('installed skills reach the runtime', () => {
  it("the runtime state lists each agent's skills; a runtime call needs the gateway token and an installed skill", async () => {
    const { user, agentId } = await subscriber();
    await ensureInstance(user.userId, { ownerEmail: user.email, image: 'img', runtimeVersion: '1.2.3', jobOwner: 'test' });
    const token = await gatewayToken(user.userId);
    await install(user, 'demo-submitter', agentId);
    const state = await call('GET', `/api/instance/${user.userId}/runtime/state`, { bearer: token });
    expect(state.body.agents[0].skills).toEqual([{ skillId: 'demo-submitter', enabled: true, config: {} }]);

    const path = (skill: string) => `/api/instance/${user.userId}/runtime/agents/${agentId}/skills/${skill}`;
    expect((await call('POST', path('demo-submitter'), { bearer: 'not-the-token', body: { action: 'list' } })).status).toBe(401);
    expect((await call('POST', path('demo-submitter'), { session: user, body: { action: 'list' } })).status).toBe(401);
    expect((await call('POST', path('guestlist'), { bearer: token, body: { action: 'list_guests' } })).status).toBe(404);
    expect((await call('POST', path('no-such-skill'), { bearer: token, body: {} })).status).toBe(404);
  });
});

describe('metrics summary', () => {
  it('counts installed skills as active and total', async () => {
    const { user, agentId } = await subscriber();
    await install(user, 'guestlist', agentId);
    await install(user, 'demo-submitter', agentId);
    const res = await call('GET', `/api/metrics/${user.userId}/summary`, { session: user });
    expect(res.status).toBe(200);
    expect(res.body.skills).toMatchObject({ active: 2, total: 2 });
  });
});
