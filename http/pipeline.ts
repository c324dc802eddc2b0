import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { routeKey, type RouteDefinition, type RouteGroup } from '#contract/route';
import { type AnswerHeaders, answerHeaders, type Challenge, challengeOnUnauthorized } from './steps/answer-headers';
import { applyRateLimit } from './steps/rate-limit';
import { authenticateCaller } from './steps/authentication';
import { capBody } from './steps/body-cap';
import { checkCsrf } from './steps/csrf';
import { beforeDeadline, underRequestDeadline } from './steps/deadline';
import { errorResponder } from './steps/error-responder';
import type { AnswerSealer } from './steps/idempotency';
import { parseJsonBody } from './steps/json-body';
import { runOperation } from './steps/operation';
import type { ApiEvent, ApiResult, Operation, Operations, PipelineMiddleware, PipelineRequest, PipelineState, Step } from './steps/request-state';
import { requestLogging } from './steps/request-logging';
import { authenticateRuntimeAgent, type RuntimeAuthenticator } from './steps/runtime-agent';
import { findRoute } from './steps/route';
import { refuseCrossSite } from './steps/same-origin';
import { validateInput } from './steps/validation';

export type { AnswerHeaders, Challenge } from './steps/answer-headers';
export type { AnswerSealer } from './steps/idempotency';
export type { RuntimeAuthenticator } from './steps/runtime-agent';
export type { ApiEvent, ApiResult, Operation, OperationContext, Operations } from './steps/request-state';
export { validationError } from './steps/validation';

export interface HandlerOptions {
  /**
   * A group-level CORS policy: its headers go on every answer of the group, so a browser can also
   * read the 401, 415, 429 and 400 the pipeline gives before the handler runs.
   */
  cors?: AnswerHeaders;
  /**
   * Seals the answers of `policy.secretAnswer` routes before they are kept for Idempotency-Key replay.
   * Given by the groups that have such routes, so only their functions bundle the key client.
   */
  answerSealer?: AnswerSealer;
  /**
   * Proves the gateway token on `auth: 'runtime'` routes. Given by the groups that have such routes,
   * so only their functions bundle the token store.
   */
  runtimeAuthenticator?: RuntimeAuthenticator;
  /**
   * The `WWW-Authenticate` value of the group's 401 answers, the pipeline's own refusals included
   * (an OAuth protected resource names its metadata there).
   */
  challenge?: Challenge;
}

/** The steps before the operation, in the order they run (docs/architecture.md §4); the first to refuse answers. */
const checksBefore = (routes: Map<string, RouteDefinition>, options: HandlerOptions): Step[] => [
  findRoute(routes),
  capBody,
  refuseCrossSite,
  parseJsonBody,
  authenticateCaller,
  checkCsrf,
  applyRateLimit,
  validateInput,
  authenticateRuntimeAgent(options.runtimeAuthenticator),
];

/** The checks as one middy step, raced as a whole against the request's deadline. */
function prepare(steps: Step[]): PipelineMiddleware {
  const run = async (request: PipelineRequest) => {
    for (const step of steps) await step(request);
  };
  return { before: (request: PipelineRequest) => beforeDeadline(run(request)) };
}

/**
 * The one place the pipeline is composed. A group's handler file calls this with its contract and a
 * map of operation name → function; operations not yet built answer 501 through the same pipeline.
 */
export function createHandler<G extends RouteGroup>(group: G, operations: NoInfer<Operations<G>>, options: HandlerOptions = {}) {
  const routes = new Map(group.routes.map((r) => [routeKey(r), r as RouteDefinition]));
  const unsealed = group.routes.find((r) => r.policy?.idempotent && r.policy?.secretAnswer && !options.answerSealer);
  if (unsealed) throw new Error(`${unsealed.operation} keeps a secret answer for replay: give createHandler an answerSealer`);
  const unowned = group.routes.find((r) => r.auth === 'runtime' && !r.path.includes('{userId}'));
  if (unowned) throw new Error(`${unowned.operation} is a runtime route: its path must name the {userId} whose gateway token it takes`);
  const unproven = group.routes.find((r) => r.auth === 'runtime' && !options.runtimeAuthenticator);
  if (unproven) throw new Error(`${unproven.operation} is a runtime route: give createHandler a runtimeAuthenticator`);
  const impl = operations as Record<string, Operation<RouteDefinition> | undefined>;

  // Registered before the error responder, so its onError runs after the error became an answer.
  const policies = [...(options.cors ? [answerHeaders(options.cors)] : []), ...(options.challenge ? [challengeOnUnauthorized(options.challenge)] : [])];
  const handler = middy<ApiEvent, ApiResult, Error, Context, PipelineState>()
    .use(requestLogging())
    .use(policies)
    .use(errorResponder(group.errorShape))
    .use(prepare(checksBefore(routes, options)))
    .use(runOperation(impl, options.answerSealer));
  return (event: ApiEvent, context: Context): Promise<ApiResult> => underRequestDeadline(context, () => handler(event, context));
}
