import { sendEmail } from '#adapters/email';
import { claimFailureNotice } from '#data/instances';
import { getUser } from '#data/users';
import { logger } from '#platform/logger';

/**
 * Tells the owner, once per launch (generation), that their agent could not start and why: the
 * reason is the last error the launcher gave, not a generic line. Sent to the account's address
 * as it is now. A failed send is logged and not retried: the reason stays on the agent and the
 * instance and in the event log.
 */
const WORDING = {
  launch: { subject: 'Your agent could not start', what: 'Your agent instance failed to start.' },
  exits: {
    subject: 'Your agent stopped and was not relaunched',
    what: 'Your agent instance kept exiting; the platform relaunched it as often as it may within an hour.',
  },
};

export async function mailLaunchFailure(userId: string, generation: number, reason: string, situation: keyof typeof WORDING = 'launch'): Promise<void> {
  if (!(await claimFailureNotice(userId, generation))) return;
  const user = await getUser(userId);
  if (!user?.email) return;
  try {
    await sendEmail({
      to: user.email,
      subject: WORDING[situation].subject,
      text:
        `${WORDING[situation].what}\n\nReason: ${reason}\n\n` +
        'Nothing was lost: your agents, memory and settings are kept. Start it again with POST /api/instance/<your user id>/start; ' +
        'the event log (GET /api/instance/<your user id>/events) has the details.',
    });
  } catch (err) {
    logger().warn('launch failure email not sent', { userId, generation, error: (err as Error).message });
  }
}
