import { decrypt, encrypt, type EnvelopeRecord } from '#platform/crypto/envelope';
import * as keys from './keys';
import { ConditionFailedError, tenant, tx } from './tenant';
import { transactRetrying } from './transact-retry';

/**
 * Per-agent secrets (name → value) at `USER#<id> / AGENTCRED#<agentId>#<name>`, the value sealed
 * under envelope encryption for this user, agent and name. Listings carry only the name, a masked
 * preview and the update time; the value is opened only for the instance's state read.
 */
export interface AgentCredentialView {
  agentId: string;
  name: string;
  preview: string;
  updatedAt: string;
}

interface AgentCredentialItem extends AgentCredentialView, Record<string, unknown> {
  secret: EnvelopeRecord;
}

const credentialContext = (userId: string, agentId: string, name: string) => ({ userId, purpose: `agent-credential:${agentId}:${name}` });

/** Values shorter than this show nothing of themselves: four characters of a short secret are too much of it. */
const PREVIEW_MIN_LENGTH = 12;
const PREVIEW_VISIBLE = 4;

export const credentialPreview = (value: string) => (value.length >= PREVIEW_MIN_LENGTH ? `••••${value.slice(-PREVIEW_VISIBLE)}` : '••••');

const view = (item: AgentCredentialView): AgentCredentialView => ({ agentId: item.agentId, name: item.name, preview: item.preview, updatedAt: item.updatedAt });

/** Creates or replaces a credential of an owned agent; undefined when the agent is not in the caller's partition. */
export async function setAgentCredential(
  userId: string,
  agentId: string,
  name: string,
  value: string,
  now = new Date(),
): Promise<AgentCredentialView | undefined> {
  const item: AgentCredentialItem = {
    agentId,
    name,
    preview: credentialPreview(value),
    updatedAt: now.toISOString(),
    secret: await encrypt(value, credentialContext(userId, agentId, name)),
  };
  try {
    await transactRetrying([
      tx.conditionCheck(keys.agent(userId, agentId), { expression: 'attribute_exists(pk)' }),
      tx.put({ ...keys.agentCredential(userId, agentId, name), ...item }),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') return undefined;
    throw err;
  }
  return view(item);
}

/** Names, previews and update times of one agent's credentials, or of all the account's agents. */
export async function listAgentCredentials(userId: string, agentId?: string): Promise<AgentCredentialView[]> {
  const items = await tenant(userId).queryAll<AgentCredentialItem>(keys.agentCredentialPrefix(agentId));
  return items.map(view);
}

/** The decrypted values of one agent's credentials: only for the account's own instance. */
export async function openAgentCredentials(userId: string, agentId: string): Promise<Record<string, string>> {
  const items = await tenant(userId).queryAll<AgentCredentialItem>(keys.agentCredentialPrefix(agentId));
  const opened = await Promise.all(
    items.map(async (item) => [item.name, (await decrypt(item.secret, credentialContext(userId, agentId, item.name))).toString('utf8')] as const),
  );
  return Object.fromEntries(opened);
}
