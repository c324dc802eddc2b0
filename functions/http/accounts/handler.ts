import { accountsContract } from '#contract/accounts';
import { createHandler } from '#http/pipeline';
import { credentialOperations } from './credentials';

export const handler = createHandler(accountsContract, credentialOperations);
