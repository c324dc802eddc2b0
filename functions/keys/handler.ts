import { keysContract } from '../../shared/contract/keys';
import { createHandler } from '../../shared/http/pipeline';
import { createApiKey, deleteApiKey, getApiKey, listApiKeys } from './operations';

export const handler = createHandler(keysContract, { listApiKeys, createApiKey, getApiKey, deleteApiKey });
