import { accountsContract } from '../../shared/contract/accounts';
import { createHandler } from '../../shared/http/pipeline';
import { credentialOperations } from './credentials';

export const handler = createHandler(accountsContract, credentialOperations);
