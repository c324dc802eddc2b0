import { assertPublicHttpsUrl } from '#adapters/url-guard';
import { ACCOUNT_EVENT_TYPES, WEBHOOK_ENDPOINTS_PER_ACCOUNT, webhooksContract } from '#contract/webhooks';
import { config } from '#platform/config';
import { createUserWebhook, deleteUserWebhook, getUserWebhook, listDeliveryAttempts, listUserWebhooks, setUserWebhookEnabled } from '#data/user-webhooks';
import { readDeliveryState } from '#data/webhook-deliveries';
import { type PlatformEvent, queueRedelivery } from '#adapters/events-queue';
import { conflict, invalid, notFound } from '#platform/errors';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';

const endpointNotFound = () => notFound('webhook endpoint not found');

/** In AWS the platform only calls public https addresses; the local stack and tests deliver on loopback. */
async function allowedUrl(url: string): Promise<void> {
  if (config().stage !== 'aws') return;
  try {
    await assertPublicHttpsUrl(url);
  } catch (err) {
    if (err instanceof Error) throw invalid(`this URL cannot receive webhooks: ${err.message}`, 'URL_NOT_ALLOWED');
    throw err;
  }
}

export const handler = createHandler(webhooksContract, {
  listWebhookEndpoints: async ({ auth }) => ({ endpoints: await listUserWebhooks(auth.userId) }),
  createWebhookEndpoint: async ({ auth, body }) => {
    await allowedUrl(body.url);
    return reply.created(await createUserWebhook(auth.userId, body.url, body.events ?? [...ACCOUNT_EVENT_TYPES], WEBHOOK_ENDPOINTS_PER_ACCOUNT));
  },
  deleteWebhookEndpoint: async ({ auth, params }) => {
    if (!(await deleteUserWebhook(auth.userId, params.id))) throw endpointNotFound();
    return { success: true as const };
  },
  updateWebhookEndpoint: async ({ auth, params, body }) => {
    const endpoint = await setUserWebhookEnabled(auth.userId, params.id, body.enabled);
    if (!endpoint) throw endpointNotFound();
    return { endpoint };
  },
  listWebhookDeliveries: async ({ auth, params, query }) => {
    if (!(await getUserWebhook(auth.userId, params.id))) throw endpointNotFound();
    return listDeliveryAttempts(auth.userId, params.id, query.limit, query.cursor);
  },
  redeliverWebhookEvent: async ({ auth, params }) => {
    const endpoint = await getUserWebhook(auth.userId, params.id);
    if (!endpoint) throw endpointNotFound();
    const state = await readDeliveryState({ userId: auth.userId, endpointId: params.id, eventId: params.eventId });
    if (!state?.eventJson) throw notFound('no delivery of this event to this endpoint');
    if (!endpoint.enabled) throw conflict('this endpoint is disabled: enable it first (PATCH with {"enabled": true})', 'ENDPOINT_DISABLED');
    await queueRedelivery(JSON.parse(state.eventJson) as PlatformEvent, params.id);
    return reply.json(202, { success: true as const, endpointId: params.id, eventId: params.eventId });
  },
});
