import { describe, expect, it } from 'vitest';
import { callSkill, expectRefused, skillOk, skillUser } from './skills-helpers';

describe('guestlist skill', () => {
  it('keeps a list per event within its capacity, checks guests in and counts heads', async () => {
    const user = await skillUser();
    await skillOk(user, 'guestlist', { action: 'create_list', eventId: 'summer-24', name: 'Summer', capacity: 5 });
    const ada = (await skillOk(user, 'guestlist', { action: 'add_guest', eventId: 'summer-24', name: 'Ada', plusOnes: 2 })).guest;
    const bob = (await skillOk(user, 'guestlist', { action: 'add_guest', eventId: 'summer-24', name: 'Bob', email: 'bob@example.com' })).guest;
    // 3 + 1 = 4 of 5 spots: a guest with one plus-one (2 spots) does not fit.
    const full = await callSkill(user, 'guestlist', { action: 'add_guest', eventId: 'summer-24', name: 'Cy', plusOnes: 1 });
    expect(full.status).toBe(409);
    expect(full.body).toMatchObject({ code: 'LIST_FULL', spotsLeft: 1 });
    await skillOk(user, 'guestlist', { action: 'check_in', eventId: 'summer-24', guestId: ada.guestId });
    expect((await callSkill(user, 'guestlist', { action: 'check_in', eventId: 'summer-24', guestId: ada.guestId })).status).toBe(409);
    let listed = await skillOk(user, 'guestlist', { action: 'list_guests', eventId: 'summer-24' });
    expect(listed.totals).toEqual({ guests: 2, headcount: 4, checkedIn: 1, checkedInHeadcount: 3, capacity: 5, spotsLeft: 1 });

    await skillOk(user, 'guestlist', { action: 'remove_guest', eventId: 'summer-24', guestId: bob.guestId });
    await skillOk(user, 'guestlist', { action: 'add_guest', eventId: 'summer-24', name: 'Cy', plusOnes: 1 });
    listed = await skillOk(user, 'guestlist', { action: 'list_guests', eventId: 'summer-24' });
    expect(listed.guests.map((g: { name: string }) => g.name)).toEqual(['Ada', 'Cy']);
    expect(listed.totals).toMatchObject({ headcount: 5, spotsLeft: 0 });
    expect((await callSkill(user, 'guestlist', { action: 'create_list', eventId: 'summer-24', capacity: 9 })).status).toBe(409);
  });

  it('holds the capacity under 20 concurrent additions', async () => {
    const user = await skillUser();
    await skillOk(user, 'guestlist', { action: 'create_list', eventId: 'rush', capacity: 7 });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => callSkill(user, 'guestlist', { action: 'add_guest', eventId: 'rush', name: `g${i}` })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(7);
    expect((await skillOk(user, 'guestlist', { action: 'list_guests', eventId: 'rush' })).totals).toMatchObject({ guests: 7, spotsLeft: 0 });
  });

  it("answers an empty account and another user's event as missing", async () => {
    const owner = await skillUser();
    const other = await skillUser();
    await skillOk(owner, 'guestlist', { action: 'create_list', eventId: 'private', capacity: 10 });
    const guest = (await skillOk(owner, 'guestlist', { action: 'add_guest', eventId: 'private', name: 'Ada' })).guest;
    expect((await callSkill(other, 'guestlist', { action: 'list_guests', eventId: 'private' })).status).toBe(404);
    expect((await callSkill(other, 'guestlist', { action: 'add_guest', eventId: 'private', name: 'Mallory' })).status).toBe(404);
    expect((await callSkill(other, 'guestlist', { action: 'check_in', eventId: 'private', guestId: guest.guestId })).status).toBe(404);
    expect((await callSkill(other, 'guestlist', { action: 'remove_guest', eventId: 'private', guestId: guest.guestId })).status).toBe(404);
  });

  it('refuses invalid bodies for each action', async () => {
    const user = await skillUser();
    await expectRefused(user, 'guestlist', [
      { action: 'create_list', eventId: 'e1', capacity: 0 },
      { action: 'add_guest', eventId: 'e1' },
      { action: 'add_guest', eventId: 'e1', name: 'x', plusOnes: 11 },
      { action: 'remove_guest', eventId: 'e1' },
      { action: 'check_in', guestId: 'g1' },
      { action: 'list_guests', eventId: 'e/1' },
      { action: 'add_guest', params: { eventId: 'e1', name: 'x' } },
    ]);
  });
});
