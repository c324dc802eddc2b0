import type { RouteDefinition } from '#contract/route';
import { notImplemented } from '../errors';
import { Reply, StreamReply } from '../reply';
import { beforeDeadline } from './deadline';
import { type AnswerSealer, idempotently } from './idempotency';
import { type ApiResult, type Operation, type OperationContext, type PipelineMiddleware, type PipelineRequest, requestIdOf, routeOf } from './request-state';
import { toResult } from './result';
import { streamResult } from './streaming';

/** What the operation receives: everything the steps before it learned of the request. */
function contextOf(request: PipelineRequest): OperationContext {
  const { event, internal } = request;
  return {
    route: routeOf(request),
    ...internal.input!,
    rawBody: internal.rawBody!,
    headers: internal.headers!,
    cookies: internal.cookies!,
    ip: internal.ip!,
    auth: internal.auth,
    runtimeAgent: internal.runtimeAgent,
    requestId: requestIdOf(event),
    event,
  } as OperationContext;
}

/** The operation's value as an answer: a Reply as given, a StreamReply as server-sent events, anything else as a 200 JSON body. */
async function answerOf(result: unknown, ctx: OperationContext): Promise<ApiResult> {
  if (result instanceof Reply) return toResult(result.status, result.body, ctx.requestId, result.headers, result.cookies);
  if (result instanceof StreamReply) return streamResult(result, ctx.event, ctx.requestId);
  return toResult(200, result, ctx.requestId);
}

/**
 * The innermost step: the route's operation on what the steps before it learned, under
 * Idempotency-Key and the deadline; an operation not yet built answers 501. It runs where middy runs
 * a handler, first of the `after` steps, because middy hands a handler only the event and the
 * Lambda context, never the request that carries the prepared context.
 */
export const runOperation = (operations: Record<string, Operation<RouteDefinition> | undefined>, sealer: AnswerSealer | undefined): PipelineMiddleware => ({
  after: async (request: PipelineRequest) => {
    const ctx = contextOf(request);
    const operation = operations[ctx.route.operation];
    if (!operation) throw notImplemented();
    request.response = await beforeDeadline(idempotently(ctx, sealer, async () => answerOf(await operation(ctx), ctx)));
  },
});
