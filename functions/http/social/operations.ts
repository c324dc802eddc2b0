import * as z from 'zod/mini';
import { gatingConfig } from '#platform/config';
import { SOCIAL_SESSION_TTL_SECONDS, type socialContract } from '#contract/social';
import { schemasOf } from '#contract/route';
import { invalid, unauthenticated } from '#platform/errors';
import type { Operations } from '#http/pipeline';
import { checkGating, gatingFailed } from './gating';
import { verifyFidToken } from './identity-token';
import { openSocialSession, refreshSocialSession } from './session';
import { lazySchema } from '#contract/lazy-schema';

type SocialOps = Operations<typeof socialContract>;

/** The spec answers a missing token with 401, so the handler checks for it before the rest of the body. */
const HasFidToken = lazySchema(() => z.looseObject({ fidToken: z.string().check(z.minLength(1)) }));

function validationError(error: z.core.$ZodError) {
  const issues = error.issues.map((i) => ({ path: ['body', ...i.path.map(String)].join('.'), message: i.message }));
  return invalid('invalid request body', 'VALIDATION_ERROR', { issues });
}

const verifyMetadata = {
  endpoint: '/api/auth/social/verify',
  method: 'POST' as const,
  description: 'Verify a social identity token (JWT) and, with an address, check token gating; answers a session token and a refresh token.',
  requiredFields: ['fidToken'],
  optionalFields: ['address'],
  response: ['success', 'fid', 'sessionToken', 'refreshToken', 'expiresIn', 'address', 'message', 'tokenGated', 'accessLevel'],
};

const refreshMetadata = {
  endpoint: '/api/auth/social/refresh',
  method: 'POST' as const,
  description: 'Exchange a refresh token for a new session token; refresh tokens rotate and work once.',
  requiredFields: ['refreshToken'],
  optionalFields: [],
  response: ['success', 'sessionToken', 'refreshToken', 'expiresIn', 'message'],
};

export const socialOperations: SocialOps = {
  getSocialVerifyInfo: async () => verifyMetadata,
  getSocialRefreshInfo: async () => refreshMetadata,

  verifySocialIdentity: async (ctx) => {
    if (!HasFidToken().safeParse(ctx.body).success) throw unauthenticated('fidToken is required', 'FID_TOKEN_REQUIRED');
    const body = schemasOf(ctx.route).body!.safeParse(ctx.body);
    if (!body.success) throw validationError(body.error);
    const { fidToken, address } = body.data as { fidToken: string; address?: string };

    const fid = await verifyFidToken(fidToken);
    let tokenGated = false;
    if (address) {
      const gating = await checkGating(address);
      if (!gating.hasAccess) throw gatingFailed(gating);
      tokenGated = gating.tokenGated;
    }
    const accessLevel = tokenGated ? 'token-holder' : 'basic';
    const { sessionToken, refreshToken } = await openSocialSession(fid, address ?? null, accessLevel);
    return {
      success: true,
      fid,
      sessionToken,
      refreshToken,
      expiresIn: SOCIAL_SESSION_TTL_SECONDS,
      address: address ?? null,
      message: tokenGated ? 'identity verified; token gating passed' : 'identity verified',
      tokenGated,
      accessLevel,
    };
  },

  refreshSocialSession: async (ctx) => {
    const { sessionToken, refreshToken } = await refreshSocialSession(ctx.body.refreshToken);
    return { success: true, sessionToken, refreshToken, expiresIn: SOCIAL_SESSION_TTL_SECONDS, message: 'session refreshed' };
  },

  verifyTokenGating: async (ctx) => {
    const { tokenGated, hasAccess, minBalance, token, chain } = await checkGating(ctx.body.address);
    return {
      fid: ctx.body.fid,
      address: ctx.body.address,
      hasAccess,
      tokenGated,
      minBalance,
      token,
      chain,
      message: !tokenGated
        ? 'token gating is off: every wallet has access'
        : hasAccess
          ? 'wallet holds enough of the gating token'
          : 'wallet does not hold enough of the gating token',
      timestamp: new Date().toISOString(),
    };
  },

  getTokenGatingStatus: async (ctx) => {
    const gating = await checkGating(ctx.query.address);
    return { address: ctx.query.address, ...gating, rpcEndpoint: gatingConfig().publicRpcUrl };
  },
};
