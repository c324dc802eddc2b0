import type { Hex } from 'viem';
import { walletContract } from '#contract/wallet';
import { createHandler } from '#http/pipeline';
import { createHostedWallet, createHostedWalletForEmail, hostedWalletInfo } from './hosted';
import { getWallet, getWalletAddress, runWalletAction } from './user-wallet';

export const handler = createHandler(walletContract, {
  getWallet: async (ctx) => getWallet(ctx.auth),
  runWalletAction: async (ctx) => runWalletAction(ctx.auth, ctx.body.action),
  getWalletAddress: async (ctx) => getWalletAddress(ctx.auth),
  createHostedWalletForEmail: async (ctx) => createHostedWalletForEmail(ctx.auth, ctx.body.email),
  getHostedWalletInfo: async () => hostedWalletInfo(),
  createHostedWallet: async (ctx) => createHostedWallet(ctx.auth, ctx.body.privateKey as Hex | undefined),
});
