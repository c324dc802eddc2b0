import { isAdminEmail, isTesterEmail } from '../../shared/auth/authenticate';
import { presentsGatewayToken } from '../../shared/auth/gateway-token';
import type { AgentRecord } from '../../shared/db/agents';
import { getUser } from '../../shared/db/users';
import { unauthorized } from '../../shared/http/errors';

/**
 * What every runtime route (functions/instance/runtime-api.ts, functions/runtime-model) checks. The
 * gateway token is checked against its stored hash, so these routes never decrypt it.
 */

export async function requireRuntime(userId: string, authorization: string | undefined): Promise<void> {
  if (!(await presentsGatewayToken(userId, authorization))) throw unauthorized('a valid gateway token is required', 'TOKEN_INVALID');
}

/** The model the platform answers an agent with: its configured one, else the one it was provisioned with. */
export const agentModel = (agent: Pick<AgentRecord, 'model' | 'config'>) => agent.config?.model ?? agent.model;

/**
 * The instance acts with its account's rights as they are now: the current email (it may have
 * changed since the first launch), and admin or tester rights only for a proven address.
 */
export async function ownerRights(userId: string): Promise<{ isAdmin: boolean; isTester: boolean } | undefined> {
  const owner = await getUser(userId, true);
  if (!owner) return undefined;
  const proven = owner.emailVerified === true;
  return { isAdmin: proven && isAdminEmail(owner.email), isTester: proven && isTesterEmail(owner.email) };
}
