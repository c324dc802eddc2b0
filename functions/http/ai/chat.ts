import type * as z from 'zod/mini';
import type { AuthContext } from '#domain/auth/authenticate';
import { modelAccess } from '#domain/ai/access';
import { generateChat, streamChat, type ModelCallInput } from '#domain/ai/model-layer';
import type { ChatRequestBody } from '#contract/ai';
import { forbidden } from '#platform/errors';
import { StreamReply } from '#http/reply';

/**
 * `POST /api/ai/chat` (spec 4.11). The spec's `x-user-plan`, `x-card-subscription-id` and
 * `x-user-email` headers grant nothing: the stored account decides (402 without a plan or an
 * active subscription), and a header that contradicts the account is refused.
 */

async function refuseContradictingHeaders(auth: AuthContext, headers: Record<string, string | undefined>) {
  const { access, plan } = await modelAccess(auth);
  const claimedPlan = headers['x-user-plan']?.trim().toLowerCase();
  if (claimedPlan && claimedPlan !== plan && claimedPlan !== access.plan) throw forbidden("x-user-plan does not match the account's plan", 'HEADER_MISMATCH');
  const claimedSub = headers['x-card-subscription-id']?.trim();
  if (claimedSub && !access.isAdmin && claimedSub !== access.subscriptionId) {
    throw forbidden("x-card-subscription-id is not the account's active subscription", 'HEADER_MISMATCH');
  }
  const claimedEmail = headers['x-user-email']?.trim().toLowerCase();
  if (claimedEmail && claimedEmail !== auth.email.toLowerCase()) throw forbidden("x-user-email is not the signed-in account's email", 'HEADER_MISMATCH');
}

const wantsStream = (accept: string | undefined) => !!accept && /(^|,)\s*text\/event-stream/i.test(accept);

export async function aiChat(auth: AuthContext, body: z.infer<ReturnType<typeof ChatRequestBody>>, headers: Record<string, string | undefined>) {
  await refuseContradictingHeaders(auth, headers);
  const input: ModelCallInput = {
    caller: { kind: 'account', account: auth },
    messages: body.messages,
    model: body.model,
    taskType: body.taskType,
    temperature: body.temperature,
    topP: body.top_p,
    maxTokens: body.max_tokens,
  };
  if (wantsStream(headers.accept)) {
    const stream = await streamChat(input);
    return new StreamReply(chatEvents(stream));
  }
  const out = await generateChat(input);
  return {
    id: out.id,
    model: out.model,
    provider: out.provider,
    ...(out.fallbackFrom ? { fallbackFrom: out.fallbackFrom } : {}),
    message: { role: 'assistant' as const, content: out.text },
    usage: out.usage,
    timestamp: new Date().toISOString(),
  };
}

/** SSE events: `start` {id, model, provider}, `delta` {content} per text piece, then `done` with usage, or `error`. */
async function* chatEvents(stream: Awaited<ReturnType<typeof streamChat>>) {
  yield {
    event: 'start',
    data: { id: stream.id, model: stream.model, provider: stream.provider, ...(stream.fallbackFrom ? { fallbackFrom: stream.fallbackFrom } : {}) },
  };
  try {
    for await (const content of stream.textStream) yield { event: 'delta', data: { content } };
    const out = await stream.result;
    yield {
      event: 'done',
      data: { id: out.id, model: out.model, provider: out.provider, finishReason: out.finishReason, usage: out.usage, timestamp: new Date().toISOString() },
    };
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'PROVIDER_ERROR';
    yield { event: 'error', data: { error: 'the provider failed while streaming', code } };
  }
}
