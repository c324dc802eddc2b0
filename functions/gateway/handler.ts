import { gatewayContract } from '../../shared/contract/gateway';
import { createHandler } from '../../shared/http/pipeline';
import { reply } from '../../shared/http/reply';
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
