import type { RuntimeAgent } from '#domain/auth/runtime-agent';
import { type PipelineRequest, routeOf, type Step } from './request-state';

/**
 * Proves the gateway token of an account (domain/auth/runtime-agent.ts `authenticateRuntime`). Given
 * by the groups that have runtime routes, so only their functions bundle the token store.
 */
export type RuntimeAuthenticator = (userId: string, authorization: string | undefined) => Promise<RuntimeAgent>;

/**
 * The calling agent runtime of an `auth: 'runtime'` route, by the gateway token of the path's
 * `{userId}` (401 TOKEN_INVALID for any other credential). It runs once the path is validated, since
 * the token belongs to that account, and after the rate limit, so failed attempts are counted too.
 */
export const authenticateRuntimeAgent =
  (authenticator: RuntimeAuthenticator | undefined): Step =>
  async (request: PipelineRequest) => {
    if (routeOf(request).auth !== 'runtime') return;
    const { userId } = request.internal.input!.params as { userId: string };
    request.internal.runtimeAgent = await authenticator!(userId, request.internal.headers!.authorization);
  };
