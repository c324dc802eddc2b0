import type { AuthContext } from '#domain/auth/authenticate';
import { sendChatMessage, StillWakingError } from '#domain/chat/chat';
import { keepForDelivery, type WakeDeliveryInput } from '#data/wake-deliveries';
import { reply } from '#http/reply';

/** The 202 of a chat whose agent was still waking: the message is kept and delivered once the instance runs. */
export async function keepWhileWaking(userId: string, err: Pick<StillWakingError, 'operationId'>, input: Omit<WakeDeliveryInput, 'operationId'>) {
  const kept = await keepForDelivery(userId, { ...input, operationId: err.operationId });
  return reply.json(202, {
    status: 'waking' as const,
    operationId: err.operationId,
    deliveryId: kept.deliveryId,
    agentId: input.agentId,
    ...(input.sessionId ? { sessionId: input.sessionId } : {}),
  });
}

/** POST /api/chat: waits for a waking agent up to WAKE_WAIT_SECONDS, then 202 and delivery once it runs. */
export async function postChatMessage(auth: AuthContext, agentId: string, message: string) {
  try {
    return await sendChatMessage(auth, agentId, message, undefined, 'chat');
  } catch (err) {
    if (err instanceof StillWakingError) return keepWhileWaking(auth.userId, err, { agentId, message, source: 'chat' });
    throw err;
  }
}
