import { sendEmail } from '#adapters/email';
import { runtimeRequest } from '#adapters/launcher';
import { listApiKeys, revokeAllApiKeys } from '#data/api-keys';
import { getInstance, replaceGatewayToken } from '#data/instances';
import { ConditionFailedError } from '#data/failures';
import { getUser } from '#data/users';
import { config } from '#platform/config';
import { logger } from '#platform/logger';
import { revokeSessions } from './session-gate';

/**
 * What recovery does to whoever else holds a credential of the account: sessions, API keys and the
 * instance gateway token (which reads and writes every agent's memory and history and spends model
 * access) stop working, and the owner is told by email what was revoked.
 */

export interface Eviction {
  /** Every session (except `keepSessionId`) is revoked. */
  sessions: boolean;
  apiKeys: boolean;
  gatewayToken: boolean;
  keepSessionId?: string;
  /** Why, for the notice: "password reset", "password change"... */
  reason: string;
  /** A recovery: the notice also lists what still acts for the account (./recovery-inventory.ts). */
  listStandingSetup?: boolean;
}

/**
 * Rotates the gateway token and hands the new one to the running instance with the old one (the
 * runtime swaps it in place: agents, memory and history stay). A stopped or unreachable instance
 * gets the new token at its next launch, which reads the stored one. Returns whether a token existed.
 */
export async function rotateGatewayToken(userId: string): Promise<boolean> {
  let rotated: Awaited<ReturnType<typeof replaceGatewayToken>>;
  try {
    rotated = await replaceGatewayToken(userId);
  } catch (err) {
    // A concurrent rotation won: the token is new either way.
    if (err instanceof ConditionFailedError) return true;
    throw err;
  }
  if (!rotated) return false;
  const instance = await getInstance(userId, true);
  const endpoint = instance?.handle?.endpoint;
  if (endpoint && instance.status === 'running') {
    try {
      const res = await runtimeRequest(endpoint, rotated.previous, '/token', { method: 'POST', body: { token: rotated.next }, timeoutMs: 5000 });
      if (res.status !== 200) logger().warn('the instance refused the rotated gateway token', { status: res.status });
    } catch (err) {
      logger().warn('the instance could not be given the rotated gateway token', { error: (err as Error).message });
    }
  }
  return true;
}

export async function evictCredentials(userId: string, what: Eviction): Promise<string[]> {
  const revoked: string[] = [];
  if (what.sessions) {
    await revokeSessions(userId, what.keepSessionId);
    revoked.push(what.keepSessionId ? 'every other signed-in session' : 'every signed-in session');
  }
  if (what.apiKeys) {
    const keys = await revokeAllApiKeys(userId);
    if (keys.length) revoked.push(`${keys.length} API key${keys.length === 1 ? '' : 's'}: ${keys.map((k) => `${k.name} (${k.keyPreview})`).join(', ')}`);
  }
  if (what.gatewayToken && (await rotateGatewayToken(userId)))
    revoked.push("your agents' instance gateway token (replaced by a new one; the instance keeps running)");
  // Keys kept on purpose are named too: one the owner does not recognise is an intruder's way back in.
  const remaining = what.apiKeys ? [] : (await listApiKeys(userId)).map((k) => `${k.name} (${k.keyPreview})`);
  const standing = what.listStandingSetup ? await (await import('./recovery-inventory')).recoveryInventory(userId) : [];
  await notifyOwner(userId, what.reason, revoked, remaining, standing);
  return revoked;
}

/** The console's Settings panel that removes everything the notice lists, after a confirmation. */
const STANDING_SETUP_PANEL_ID = 'remove-standing-setup';
const removeStandingSetupLink = () => new URL(`/settings#${STANDING_SETUP_PANEL_ID}`, config().appUrl).href;

/** The notice is best effort: a mail failure must not undo a recovery that already happened. */
async function notifyOwner(userId: string, reason: string, revoked: string[], remaining: string[], standing: string[]): Promise<void> {
  if (!revoked.length) return;
  try {
    const user = await getUser(userId, true);
    if (!user) return;
    await sendEmail({
      to: user.email,
      subject: 'Access to your account was revoked',
      text:
        `After a ${reason} on your account, these credentials no longer work:\n\n` +
        revoked.map((r) => `- ${r}\n`).join('') +
        (remaining.length
          ? `\nThese API keys were NOT revoked and still work:\n\n${remaining.map((k) => `- ${k}\n`).join('')}\nRevoke any you do not recognise in Settings, API keys.\n`
          : '') +
        (standing.length
          ? `\nStill set up on your account, and acting without a sign-in; remove anything you did not set up (console: Settings for webhook endpoints, each agent for its prompt, schedules and channels):\n\n${standing.map((s) => `- ${s}\n`).join('')}` +
            `\nTo remove all of them in one step, sign in and open:\n${removeStandingSetupLink()}\n`
          : '') +
        '\nIf this was not you, reset your password now.\n',
    });
  } catch (err) {
    logger().error('revocation notice not sent', { error: (err as Error).message });
  }
}
