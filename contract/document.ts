import * as accountFields from './account-fields';
import * as accounts from './accounts';
import * as agentChat from './agent-chat';
import * as agentLogs from './agent-logs';
import * as agentVerification from './agent-verification';
import * as agents from './agents';
import * as ai from './ai';
import * as billing from './billing';
import * as common from './common';
import * as gateway from './gateway';
import * as infraMcp from './infra-mcp';
import * as instance from './instance';
import * as keys from './keys';
import * as memory from './memory';
import * as metrics from './metrics';
import * as oauthSignIn from './oauth-sign-in';
import * as platform from './platform';
import * as provision from './provision';
import * as runtimeModel from './runtime-model';
import * as settings from './settings';
import * as skills from './skills';
import * as social from './social';
import * as wallet from './wallet';
import * as walletSignIn from './wallet-sign-in';
import { contract } from './index';
import { buildOpenApi, nameContractSchemas } from './openapi';

/** Every contract module, whose exported object schemas become named components of the document. */
const CONTRACT_MODULES = [
  common,
  accountFields,
  accounts,
  oauthSignIn,
  walletSignIn,
  settings,
  social,
  agents,
  agentVerification,
  agentLogs,
  instance,
  runtimeModel,
  provision,
  memory,
  keys,
  skills,
  wallet,
  metrics,
  platform,
  ai,
  gateway,
  infraMcp,
  billing,
  agentChat,
];

/** The whole API's OpenAPI 3.1 document (`npm run openapi`, `GET /api/openapi.json`). */
export function openApiDocument(info: { version: string; serverUrl?: string }) {
  nameContractSchemas(CONTRACT_MODULES);
  return buildOpenApi(contract, info);
}
