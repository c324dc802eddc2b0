import { describe, expect, it } from 'vitest';
import { expectRefused, skillOk, skillUser } from './skills-helpers';

describe('demo-submitter skill', () => {
  it('stores a submission with its status and lists them newest first, per account', async () => {
    const user = await skillUser();
    const other = await skillUser();
    const first = await skillOk(user, 'demo-submitter', { action: 'submit', title: 'Midnight Drive', artist: 'Nova Lane' });
    expect(first.demo).toMatchObject({ title: 'Midnight Drive', artist: 'Nova Lane', status: 'submitted' });
    await skillOk(user, 'demo-submitter', {
      action: 'submit',
      title: 'Second',
      artist: 'Nova Lane',
      recipient: 'Deep Records',
      link: 'https://example.com/demo',
    });
    const listed = await skillOk(user, 'demo-submitter', { action: 'list' });
    expect(listed.demos.map((d: { title: string }) => d.title)).toEqual(['Second', 'Midnight Drive']);
    expect((await skillOk(user, 'demo-submitter', { action: 'list', status: 'accepted' })).count).toBe(0);
    expect((await skillOk(other, 'demo-submitter', { action: 'list' })).demos).toEqual([]);
  });

  it('refuses invalid bodies for each action', async () => {
    const user = await skillUser();
    await expectRefused(user, 'demo-submitter', [
      { action: 'submit', title: 'No artist' },
      { action: 'submit', title: 'x', artist: 'y', link: 'http://insecure.example.com' },
      { action: 'list', status: 'lost' },
    ]);
  });
});
