import { guestlistActions as bodies } from '#contract/skill-actions/events';
import {
  addGuest,
  AlreadyCheckedInError,
  checkInGuest,
  createGuestList,
  getGuestList,
  listGuests,
  ListExistsError,
  ListFullError,
  removeGuest,
} from '#data/skills/guestlist';
import { conflict, notFound } from '#http/errors';
import { action, type SkillModule } from '#domain/skills/skill-module';

const noList = () => notFound('this event has no guest list; create it first');

export const skill: SkillModule = {
  name: 'guestlist',
  actions: {
    create_list: action(bodies().create_list, async (call, { action: _a, ...input }) => {
      try {
        return { list: await createGuestList(call.userId, input, call.now) };
      } catch (err) {
        if (err instanceof ListExistsError) throw conflict(err.message, 'LIST_EXISTS');
        throw err;
      }
    }),
    add_guest: action(bodies().add_guest, async (call, { action: _a, ...input }) => {
      try {
        const guest = await addGuest(call.userId, input, call.now);
        if (!guest) throw noList();
        return { guest };
      } catch (err) {
        if (err instanceof ListFullError) throw conflict('the guest list is full', 'LIST_FULL', { spotsLeft: err.spotsLeft });
        throw err;
      }
    }),
    remove_guest: action(bodies().remove_guest, async (call, body) => {
      if (!(await removeGuest(call.userId, body.eventId, body.guestId))) throw notFound('no such guest');
      return { removed: body.guestId };
    }),
    check_in: action(bodies().check_in, async (call, body) => {
      try {
        const guest = await checkInGuest(call.userId, body.eventId, body.guestId, call.now);
        if (!guest) throw notFound('no such guest');
        return { guest };
      } catch (err) {
        if (err instanceof AlreadyCheckedInError) throw conflict(err.message, 'ALREADY_CHECKED_IN');
        throw err;
      }
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
