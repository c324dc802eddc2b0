import { accountsContract } from './accounts';
import { agentChatContract } from './agent-chat';
import { agentLogsContract } from './agent-logs';
import { agentVerificationContract } from './agent-verification';
import { agentsContract } from './agents';
import { apiDocumentContract } from './api-document';
import { aiContract } from './ai';
import { billingContract } from './billing';
import { cardContract } from './card';
import { gatewayContract } from './gateway';
import { infraMcpContract } from './infra-mcp';
import { instanceContract } from './instance';
import { keysContract } from './keys';
import { mcpContract } from './mcp';
import { mcpOAuthContract } from './mcp-oauth';
import { memoryContract } from './memory';
import { metricsContract } from './metrics';
import { oauthSignInContract } from './oauth-sign-in';
import { openAiCompatibleContract } from './openai-compatible';
import { platformContract } from './platform';
import { agentAutonomyContract } from './autonomy';
import { provisionContract } from './provision';
import { runtimeModelContract } from './runtime-model';
import { settingsContract } from './settings';
import { skillsContract } from './skills';
import { socialContract } from './social';
import { walletContract } from './wallet';
import { walletSignInContract } from './wallet-sign-in';
import { webhooksContract } from './webhooks';
import type { RouteDefinition, RouteGroup } from './route';

export * from './route';

/** Every HTTP group of the platform: one Lambda each, one API route per entry. */
export const contract: readonly RouteGroup[] = [
  accountsContract,
  oauthSignInContract,
  walletSignInContract,
  settingsContract,
  socialContract,
  agentsContract,
  agentVerificationContract,
  agentLogsContract,
  agentAutonomyContract,
  instanceContract,
  runtimeModelContract,
  provisionContract,
  memoryContract,
  keysContract,
  skillsContract,
  walletContract,
  metricsContract,
  platformContract,
  apiDocumentContract,
  aiContract,
  openAiCompatibleContract,
  gatewayContract,
  infraMcpContract,
  billingContract,
  cardContract,
  agentChatContract,
  webhooksContract,
  mcpContract,
  mcpOAuthContract,
];

export interface ContractRoute extends RouteDefinition {
  group: string;
}

export const allRoutes: readonly ContractRoute[] = contract.flatMap((g) => g.routes.map((r) => ({ ...r, group: g.group })));
