import { runtimeModelContract } from '#contract/runtime-model';
import { createHandler } from '#http/pipeline';
import { requireRuntime } from '#domain/auth/runtime-agent';
import { completion } from './completion';

export const handler = createHandler(runtimeModelContract, {
  runtimeChatCompletion: async ({ params, body, headers }) => {
    await requireRuntime(params.userId, headers.authorization);
    return completion(params.userId, body);
  },
});
