import { keysContract } from '#contract/keys';
import { createHandler } from '#http/pipeline';
import { envelopeSealer } from '#http/sealed-answers';
import { createApiKey, deleteApiKey, getApiKey, listApiKeys } from './operations';

export const handler = createHandler(keysContract, { listApiKeys, createApiKey, getApiKey, deleteApiKey }, { answerSealer: envelopeSealer });
