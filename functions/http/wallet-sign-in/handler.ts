import { walletSignInContract } from '#contract/wallet-sign-in';
import { createHandler } from '#http/pipeline';
import { walletSignInOperations } from './operations';

export const handler = createHandler(walletSignInContract, walletSignInOperations);
