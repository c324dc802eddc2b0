import type { Hex } from 'viem';
import { signInWithIdentity, type ExternalIdentity } from '#domain/auth/linked-identity';
import { startSession } from '#domain/auth/sign-in';
import { checkSiweMessage, consumeNonce, issueNonce, parseSiweMessage, verifySiweSignature } from '#domain/auth/siwe';
import { config } from '#platform/config';
import type { walletSignInContract } from '#contract/wallet-sign-in';
import { schemasOf } from '#contract/route';
import { accountView, loginItems, loginLookup } from '#data/users';
import { unauthenticated } from '#platform/errors';
import type { Operations } from '#http/pipeline';
import { reply } from '#http/reply';

type WalletSignInOps = Operations<typeof walletSignInContract>;

const rejected = (message: string, code = 'SIWE_INVALID') => unauthenticated(message, code);

/**
 * A wallet's account email is derived from its address (`<lower-case address>@wallet.local`): the
 * "wallet-derived email" of spec 4.1 rule 2, which links the wallet to an account that already has it.
 */
export const walletEmail = (address: string) => `${address.toLowerCase()}@wallet.local`;

export function walletIdentity(address: `0x${string}`): ExternalIdentity {
  const login = { provider: 'wallet' as const, subject: address.toLowerCase() };
  return {
    lookup: loginLookup(login),
    linkItems: (userId) => loginItems(userId, login),
    login,
    email: walletEmail(address),
    linkByEmail: true,
    name: address,
    walletAddress: address,
    method: 'wallet',
  };
}

const wantsJson = (accept: string | undefined) => !!accept && /\bapplication\/json\b/i.test(accept);

export const walletSignInOperations: WalletSignInOps = {
  getSiweNonce: async () => issueNonce(),

  signInWithWallet: async (ctx) => {
    const body = schemasOf(ctx.route).body!.safeParse(ctx.body);
    if (!body.success) throw rejected('message and signature (0x-prefixed hex) are required');
    const { message, signature } = body.data as { message: string; signature: Hex };

    const siwe = await parseSiweMessage(message);
    checkSiweMessage(siwe, config().appUrl);
    // Consumed before the signature is checked: a nonce is good for one attempt, whatever its outcome.
    if (!(await consumeNonce(siwe.nonce))) throw rejected('nonce is unknown, expired or already used', 'NONCE_INVALID');

    const valid = await verifySiweSignature(siwe.address, message, signature);
    if (!valid) throw rejected('signature does not verify for the message address', 'SIGNATURE_INVALID');

    const { user } = await signInWithIdentity(walletIdentity(siwe.address));
    const session = await startSession(user);
    if (wantsJson(ctx.headers.accept)) return reply.json(200, { user: accountView(user) }, {}, session.cookies);
    return reply.redirect(new URL(ctx.query.callbackUrl ?? '/', config().appUrl).href, 302, session.cookies);
  },
};
