import { presentsGatewayToken } from './gateway-token';
import type { AgentRecord } from '#data/agents';
import { getUser } from '#data/users';
import { unauthenticated } from '#platform/errors';
import { accountRights, type AccountRights } from './rights';

/** The agent runtime of one account, as the pipeline hands it to the operation of an `auth: 'runtime'` route. */
export interface RuntimeAgent {
  /** The account whose instance runs the runtime: the path's `{userId}` its gateway token was issued for. */
  userId: string;
}

/**
 * The runtime of the account `userId`, proven by its gateway token. The token is checked against its
 * stored hash, so runtime routes never decrypt it.
 */
export async function authenticateRuntime(userId: string, authorization: string | undefined): Promise<RuntimeAgent> {
  if (!(await presentsGatewayToken(userId, authorization))) throw unauthenticated('a valid gateway token is required', 'TOKEN_INVALID');
  return { userId };
}

/** The model the platform answers an agent with: its configured one, else the one it was provisioned with. */
export const agentModel = (agent: Pick<AgentRecord, 'model' | 'config'>) => agent.config?.model ?? agent.model;

/**
 * The instance acts with its account's rights as they are now: the current email (it may have
 * changed since the first launch), and admin or tester rights only for a proven address.
 */
export async function ownerRights(userId: string): Promise<AccountRights | undefined> {
  const owner = await getUser(userId, true);
  return owner ? accountRights(owner) : undefined;
}
