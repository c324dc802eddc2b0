import { bookingSettlementBodies as bodies } from '#contract/skill-actions/payments';
import { createEscrow, EscrowAlreadyReleasedError, getEscrow, listEscrows, releaseEscrow, type BookingEscrow } from '#data/skills/bookings';
import { notFound } from '#platform/errors';
import { fromMicros, microsToCents, toMicros } from '../decimal';
import { bookingTerms, numberToMicros, settle } from '../settlement';
import { action, type SkillModule } from '#domain/skills/skill-module';

/**
 * Escrow of a booking's deposit, released once. The settlement rule (guarantee versus backend) is
 * documented on `settle` in ../settlement.ts and in the contract; simulate_settlement runs the same
 * computation and stores nothing.
 */
const view = (b: BookingEscrow) => ({
  bookingId: b.bookingId,
  status: b.status === 'completed' ? 'released' : 'escrowed',
  escrow: b.escrow,
  createdAt: b.createdAt,
  releasedAt: b.releasedAt ?? null,
  settlement: b.settlement ?? null,
});

export const skill: SkillModule = {
  name: 'booking-settlement',
  actions: {
    list: action(bodies().list, async (call) => {
      const bookings = (await listEscrows(call.userId)).filter((b) => b.escrow).map(view);
      return { bookings, count: bookings.length };
    }),
    get: action(bodies().get, async (call, body) => {
      const booking = await getEscrow(call.userId, body.bookingId);
      if (!booking?.escrow) throw notFound('no escrow for this booking');
      return { booking: view(booking) };
    }),
    create_escrow: action(bodies().create_escrow, async (call, body) => {
      const terms = bookingTerms(body.booking);
      const escrow: BookingEscrow = {
        bookingId: body.bookingId,
        status: 'pending',
        escrow: { guarantee: fromMicros(terms.guarantee), backend: fromMicros(terms.backendPercent), deposit: fromMicros(terms.deposit) },
        createdAt: call.now.toISOString(),
      };
      await createEscrow(call.userId, escrow);
      return { booking: view(escrow) };
    }),
    release_funds: action(bodies().release_funds, async (call, body) => {
      const booking = await getEscrow(call.userId, body.bookingId);
      if (!booking?.escrow) throw notFound('no escrow for this booking');
      if (booking.status === 'completed') throw new EscrowAlreadyReleasedError();
      const terms = {
        guarantee: toMicros(booking.escrow.guarantee),
        backendPercent: toMicros(booking.escrow.backend),
        deposit: toMicros(booking.escrow.deposit),
      };
      const { payoutMicros, figures } = settle(terms, numberToMicros(body.netRevenue ?? 0));
      const releasedAt = call.now.toISOString();
      await releaseEscrow(call.userId, body.bookingId, {
        releasedAt,
        settlement: figures,
        revenueMonth: releasedAt.slice(0, 7),
        revenueCents: Number(microsToCents(payoutMicros)),
      });
      return { booking: view({ ...booking, status: 'completed', releasedAt, settlement: figures }), released: figures.deposit };
    }),
    simulate_settlement: action(bodies().simulate_settlement, async (_call, body) => ({
      settlement: settle(bookingTerms(body.booking), numberToMicros(body.booking.netRevenue ?? 0)).figures,
      simulated: true,
    })),
  },
};
