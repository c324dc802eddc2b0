import { guestlistActions as bodies } from '#contract/skill-actions/events';
import { addGuest, checkInGuest, createGuestList, getGuestList, listGuests, removeGuest } from '#data/skills/guestlist';
import { notFound } from '#platform/errors';
import { action, type SkillModule } from '#domain/skills/skill-module';

const noList = () => notFound('this event has no guest list; create it first');

export const skill: SkillModule = {
  name: 'guestlist',
  actions: {
    create_list: action(bodies().create_list, async (call, { action: _a, ...input }) => {
      return { list: await createGuestList(call.userId, input, call.now) };
    }),
    add_guest: action(bodies().add_guest, async (call, { action: _a, ...input }) => {
      const guest = await addGuest(call.userId, input, call.now);
      if (!guest) throw noList();
      return { guest };
    }),
    remove_guest: action(bodies().remove_guest, async (call, body) => {
      if (!(await removeGuest(call.userId, body.eventId, body.guestId))) throw notFound('no such guest');
      return { removed: body.guestId };
    }),
    check_in: action(bodies().check_in, async (call, body) => {
      const guest = await checkInGuest(call.userId, body.eventId, body.guestId, call.now);
      if (!guest) throw notFound('no such guest');
      return { guest };
    }),
    list_guests: action(bodies().list_guests, async (call, body) => {
      const [list, guests] = await Promise.all([getGuestList(call.userId, body.eventId, true), listGuests(call.userId, body.eventId)]);
      if (!list) throw noList();
      const headcount = guests.reduce((n, g) => n + 1 + g.plusOnes, 0);
      const arrived = guests.filter((g) => g.checkedInAt);
      return {
        list,
        guests,
        totals: {
          guests: guests.length,
          headcount,
          checkedIn: arrived.length,
          checkedInHeadcount: arrived.reduce((n, g) => n + 1 + g.plusOnes, 0),
          capacity: list.capacity,
          spotsLeft: list.spotsLeft,
        },
      };
    }),
  },
};
