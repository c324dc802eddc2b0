import { describe, expect, it } from 'vitest';
import { call, subscribedSession, testSession } from '../helpers/api';
import { putTestAgent } from '../security/route-samples';

/** The part-B skills over the real HTTP pipeline: a subscriber's session, a valid call and an invalid body each. */
const subscriber = () => subscribedSession();

describe('record-keeping skills over HTTP', () => {
  it('answer {success: true, ...} to a valid body and 400 with the issues to an invalid one', async () => {
    const session = await subscriber();
    const agentId = await putTestAgent(session.userId);
    const cases: [string, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>][] = [
      ['groupie-manager', {}, { segmentation: { superfans: 0, casual: 0, new: 0 } }, { action: 'segment', extra: 1 }],
      ['royalty-tracker', { action: 'total' }, { total: '0.000000', statements: 0 }, { action: 'total', userId: 'x' }],
      ['notes-workspace', { action: 'create_note', title: 'Rider' }, { note: { title: 'Rider' } }, { action: 'create_note' }],
      ['calendar', { action: 'list_events' }, { events: [], count: 0 }, { action: 'list_events', from: 'soon' }],
      ['workspace-suite', { action: 'list_folder' }, { folders: [], documents: [] }, { action: 'list_folder', folderId: 1 }],
      ['file-manager', { action: 'usage' }, { usedBytes: 0, limitBytes: 2 * 1024 ** 3 }, { action: 'usage', limitBytes: 1 }],
      ['treasury', { action: 'list_wallets' }, { wallets: [], count: 0 }, { action: 'add_wallet', address: 'nope' }],
      ['dj-streaming', { action: 'status', agentId }, { status: 'idle', set: null }, { action: 'status', agentId: 'bad id' }],
    ];
    for (const [name, body, expected, invalid] of cases) {
      const ok = await call('POST', `/api/skills/${name}`, { session, body });
      expect(ok.status, `${name}: ${ok.text}`).toBe(200);
      expect(ok.body).toMatchObject({ success: true, ...expected });
      const bad = await call('POST', `/api/skills/${name}`, { session, body: invalid });
      expect(bad.status, name).toBe(400);
      expect(bad.body).toMatchObject({ code: 'VALIDATION_ERROR', issues: expect.any(Array) });
    }
  });

  it('needs an active subscription', async () => {
    const session = await testSession();
    expect((await call('POST', '/api/skills/royalty-tracker', { session, body: { action: 'total' } })).status).toBe(402);
  });
});
