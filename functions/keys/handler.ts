import { keysContract } from '../../shared/contract/keys';
import { createHandler } from '../../shared/http/pipeline';
import { envelopeSealer } from '../../shared/http/sealed-answers';
import { createApiKey, deleteApiKey, getApiKey, listApiKeys } from './operations';

export const handler = createHandler(keysContract, { listApiKeys, createApiKey, getApiKey, deleteApiKey }, { answerSealer: envelopeSealer });
