import * as z from 'zod/mini';
import { config } from '#platform/config';
import { lazySchema } from '#contract/lazy-schema';
import { sendJson } from './queue';

/**
 * The provisioner's queue (SQS): what every function that asks for an instance change sends, apart
 * from ./launcher.ts, which selects the ECS or local launcher that only the provisioner runs. A
 * function that only queues work (the budget pause, wake, the lifecycle routes) reaches the SQS
 * client alone, never the ECS client or the local launcher.
 */

const nonEmpty = () => z.string().check(z.minLength(1));

/**
 * Work for the provisioner: launch an agent's instance (or join the running one), or carry
 * out the lifecycle transition that produced instance `generation`.
 */
export const ProvisioningMessage = lazySchema(() =>
  z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('agent'), userId: nonEmpty(), agentId: nonEmpty(), ownerEmail: nonEmpty() }),
    z.object({
      kind: z.literal('lifecycle'),
      userId: nonEmpty(),
      generation: z.int().check(z.positive()),
      op: z.enum(['launch', 'start', 'stop', 'restart', 'update', 'repair', 'reset-memory']),
    }),
    /** Finish deleting an account: stop its instance, cancel its card subscription, then delete its data (retried until done). */
    z.object({ kind: z.literal('account-deletion'), userId: nonEmpty() }),
  ]),
);
export type ProvisioningMessage = z.infer<ReturnType<typeof ProvisioningMessage>>;

export class QueueNotConfiguredError extends Error {}

/** Queues work for the provisioner; throws when the queue is not configured or SQS refuses. */
export async function requestProvisioning(message: ProvisioningMessage, opts: { delaySeconds?: number } = {}): Promise<void> {
  const url = config().provisioningQueueUrl;
  if (!url) throw new QueueNotConfiguredError('PROVISIONING_QUEUE_URL is not set');
  await sendJson(url, message, opts);
}
