import { openAiCompatibleContract } from '#contract/openai-compatible';
import { createHandler } from '#http/pipeline';
import { streamingEntry } from '#http/response-streaming';

/**
 * The OpenAI-compatible API. Each route's module is loaded on its first call: a container started for
 * the model list does not parse the model layer and the agent exchange.
 */
const models = () => import('./models');
const completions = () => import('./completions');

export const handler = createHandler(openAiCompatibleContract, {
  listOpenAiModels: async ({ auth }) => (await models()).listOpenAiModels(auth),
  createOpenAiChatCompletion: async ({ auth, body }) => (await completions()).createChatCompletion(auth, body),
});

/** The Function URL entry (response streaming): `stream: true` answers its chunks as they come. */
export const streamHandler = streamingEntry(openAiCompatibleContract, handler);
