import { sendEmail } from '#adapters/email';
import { eventTicketingActions as bodies } from '#contract/skill-actions/events';
import { createTicketedEvent, getTicketedEvent, listTicketedEvents, listTicketOrders, purchaseTickets } from '#data/skills/events';
import { notFound } from '#platform/errors';
import { logger } from '#http/logger';
import { action, type SkillModule } from '#domain/skills/skill-module';

const money = (cents: number, currency: string) => `${(cents / 100).toFixed(2)} ${currency}`;

export const skill: SkillModule = {
  name: 'event-ticketing',
  actions: {
    create_event: action(bodies().create_event, async (call, { action: _a, ...input }) => ({ event: await createTicketedEvent(call.userId, input, call.now) })),
    list_events: action(bodies().list_events, async (call) => {
      const events = await listTicketedEvents(call.userId);
      return { events, count: events.length };
    }),
    purchase: action(bodies().purchase, async (call, body) => {
      const event = await getTicketedEvent(call.userId, body.eventId);
      if (!event) throw notFound('no such event');
      if (!Object.hasOwn(event.tiers, body.tier)) throw notFound('no such ticket tier');
      const order = await purchaseTickets(call.userId, event, body.tier, body.quantity, body.email, call.now);
      // The sale stands once stored; a confirmation that cannot be sent is reported, not undone.
      let confirmationSent = true;
      try {
        await sendEmail({
          to: body.email,
          subject: `Your tickets for ${event.name}`,
          text: `Order ${order.orderId}: ${order.quantity} × ${order.tier} for ${event.name} on ${event.date}${event.venue ? ` at ${event.venue}` : ''}. Total ${money(order.amountCents, order.currency)}.`,
        });
      } catch (err) {
        confirmationSent = false;
        logger().warn('ticket confirmation not sent', { orderId: order.orderId, error: (err as Error).message });
      }
      return { order, confirmationSent };
    }),
    list_orders: action(bodies().list_orders, async (call, body) => {
      const orders = await listTicketOrders(call.userId, body.eventId);
      return { orders, count: orders.length, ticketsSold: orders.reduce((n, o) => n + o.quantity, 0) };
    }),
  },
};
