import { accountsContract } from '../../shared/contract/accounts';
import { createHandler } from '../../shared/http/pipeline';
import { credentialOperations } from './credentials';
import { oauthOperations } from './oauth';
import { walletSignInOperations } from './wallet-sign-in';

export const handler = createHandler(accountsContract, { ...credentialOperations, ...walletSignInOperations, ...oauthOperations });
