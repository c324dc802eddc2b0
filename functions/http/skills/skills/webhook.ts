import { randomBytes } from 'node:crypto';
import { FetchFailedError, vetUrl } from '#adapters/guarded-fetch';
import { webhookBodies as bodies } from '#contract/skill-actions/development-creative';
import { WEBHOOK_ENDPOINTS_PER_ACCOUNT } from '#contract/webhooks';
import { forgetWebhookMessage, getWebhookMessage, recordWebhookMessage } from '#data/skills/webhook-messages';
import { createUserWebhook, deleteUserWebhook, getUserWebhook, listDeliveryAttempts, listUserWebhooks } from '#data/user-webhooks';
import { queueEndpointMessage } from '#adapters/events-queue';
import { invalid, notFound } from '#platform/errors';
import { action, type SkillModule } from '#domain/skills/skill-module';

/**
 * Signed deliveries to endpoints the user registers, on the account's webhook machinery: the
 * endpoints are the account's webhook endpoints (data/user-webhooks.ts: one registry, one
 * limit, the secret envelope-encrypted and shown once), a message goes through the events queue
 * to the delivery worker (functions/workers/webhook-delivery), which signs it with Standard Webhooks,
 * posts it through the guarded fetch, logs every attempt, and lets SQS retry a failure with the
 * same `webhook-id`. Endpoints registered here take no platform events (their filter is empty).
 */
const view = (e: { id: string; url: string; createdAt: string }) => ({ endpointId: e.id, url: e.url, createdAt: e.createdAt });

async function ownEndpoint(userId: string, endpointId: string) {
  const endpoint = await getUserWebhook(userId, endpointId);
  if (!endpoint) throw notFound('webhook endpoint not found');
  return endpoint;
}

export const skill: SkillModule = {
  name: 'webhook',
  actions: {
    register: action(bodies().register, async (call, body) => {
      try {
        await vetUrl(body.url);
      } catch (err) {
        if (err instanceof FetchFailedError) throw invalid(`this URL cannot receive webhooks: ${err.message}`, 'URL_NOT_ALLOWED');
        throw err;
      }
      const { endpoint, secret } = await createUserWebhook(call.userId, new URL(body.url).href, [], WEBHOOK_ENDPOINTS_PER_ACCOUNT);
      return { endpoint: view(endpoint), secret, secretShownOnce: true };
    }),
    list: action(bodies().list, async (call) => {
      const endpoints = (await listUserWebhooks(call.userId)).map(view);
      return { endpoints, count: endpoints.length };
    }),
    remove: action(bodies().remove, async (call, body) => {
      if (!(await deleteUserWebhook(call.userId, body.endpointId))) throw notFound('webhook endpoint not found');
      return { removed: body.endpointId };
    }),
    send: action(bodies().send, async (call, body) => {
      await ownEndpoint(call.userId, body.endpointId);
      const messageId = body.id ?? `msg_${randomBytes(12).toString('base64url')}`;
      const message = { messageId, endpointId: body.endpointId, type: body.type, queuedAt: call.now.toISOString() };
      if (!(await recordWebhookMessage(call.userId, message))) {
        const earlier = await getWebhookMessage(call.userId, messageId);
        if (earlier?.endpointId !== body.endpointId || earlier.type !== body.type)
          throw invalid('this message id was already used for another message', 'MESSAGE_ID_REUSED');
        return { message: earlier, queued: false, duplicate: true };
      }
      try {
        await queueEndpointMessage(call.userId, body.endpointId, {
          id: messageId,
          type: body.type as `${string}.${string}`,
          timestamp: message.queuedAt,
          data: body.payload,
        });
      } catch (err) {
        await forgetWebhookMessage(call.userId, messageId);
        throw err;
      }
      return { message, queued: true, duplicate: false };
    }),
    deliveries: action(bodies().deliveries, async (call, body) => {
      await ownEndpoint(call.userId, body.endpointId);
      return listDeliveryAttempts(call.userId, body.endpointId, body.limit, body.cursor);
    }),
  },
};
