import { walletSignInContract } from '../../shared/contract/wallet-sign-in';
import { createHandler } from '../../shared/http/pipeline';
import { walletSignInOperations } from './operations';

export const handler = createHandler(walletSignInContract, walletSignInOperations);
