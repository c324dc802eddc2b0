import { verifyCardWebhook } from '#adapters/card';
import { applyCardEvent } from '#domain/billing/subscriptions';
import { logger } from '#http/logger';
import { emitMetrics, PLATFORM_METRICS } from '#platform/metrics';

/** Verify first, on the exact bytes; nothing of an unverified body is read or stored. */
export async function receiveCardWebhook(rawBody: string, signature: string | undefined) {
  const event = await verifyCardWebhook(rawBody, signature);
  const outcome = await applyCardEvent(event);
  logger().info('card webhook', { eventId: event.id, type: event.type, outcome });
  emitMetrics({ [outcome === 'applied' ? PLATFORM_METRICS.paymentsApplied : PLATFORM_METRICS.paymentsNotApplied]: 1 });
  return { received: true as const };
}
