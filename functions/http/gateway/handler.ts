import { gatewayContract } from '#contract/gateway';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';
import { streamingEntry } from '#http/response-streaming';
import { callGateway } from './call';
import { corsHeaders, preflightHeaders } from './cors';

export const handler = createHandler(
  gatewayContract,
  {
    callGateway,
    gatewayPreflight: async ({ headers }) => reply.noContent(preflightHeaders(headers.origin)),
  },
  { cors: (event) => corsHeaders(event.headers?.origin) },
);

/** The Function URL entry (response streaming): the same pipeline, its events written as they come. */
export const streamHandler = streamingEntry(gatewayContract, handler);
