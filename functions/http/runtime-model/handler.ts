import { runtimeModelContract } from '#contract/runtime-model';
import { createHandler } from '#http/pipeline';
import { authenticateRuntime } from '#domain/auth/runtime-agent';
import { completion } from './completion';

export const handler = createHandler(
  runtimeModelContract,
  {
    runtimeChatCompletion: async ({ runtimeAgent, body }) => completion(runtimeAgent.userId, body),
  },
  { runtimeAuthenticator: authenticateRuntime },
);
