import { sendEmail } from '#adapters/email';
import { getUser } from '#data/users';
import type { UserWebhookEndpoint } from '#data/user-webhooks';
import { logger } from '#http/logger';

/**
 * Tells the owner, once (the endpoint's disabling is claimed by a conditional write), that an
 * endpoint was disabled and how to turn it back on. Names the host only: a receiver URL may carry
 * a token in its path. A failed send is logged and not retried: the endpoint list shows the state.
 */
export async function mailEndpointDisabled(userId: string, endpoint: UserWebhookEndpoint, disableAfterMs: number): Promise<void> {
  const user = await getUser(userId);
  if (!user?.email) return;
  const hours = Math.round(disableAfterMs / 360_000) / 10;
  try {
    await sendEmail({
      to: user.email,
      subject: 'A webhook endpoint was disabled',
      text:
        `Every delivery to your webhook endpoint ${endpoint.id} (${new URL(endpoint.url).host}) failed for ${hours} hours, so it was disabled ` +
        'and nothing more is sent to it.\n\nThe delivery log (GET /api/webhooks/endpoints/' +
        `${endpoint.id}/deliveries) shows what it answered. Once it works again, turn it back on with ` +
        `PATCH /api/webhooks/endpoints/${endpoint.id} and the body {"enabled":true}; an earlier event can be sent again with ` +
        `POST /api/webhooks/endpoints/${endpoint.id}/deliveries/<eventId>/redeliver.`,
    });
  } catch (err) {
    logger().warn('webhook endpoint disabled notice not sent', { userId, endpointId: endpoint.id, error: (err as Error).message });
  }
}
