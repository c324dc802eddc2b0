import { EmailRejectedError, sendEmail } from '#adapters/email';
import { requirePlan } from '#domain/billing/entitlements';
import { planAccess } from '#domain/skills/plan-access';
import { EMAIL_DAILY_LIMITS, emailBodies as bodies } from '#contract/skill-actions/payments';
import { DailyLimitExceededError } from '#data/skills/daily-counter';
import { emailsSentOn, giveBackEmails, listEmails, markEmail, recordEmail, reserveEmails, type EmailAudit } from '#data/skills/email-audit';
import { limitReached, unavailable } from '#platform/errors';
import { action, type SkillModule } from '#domain/skills/skill-module';

/**
 * Email on the user's behalf through the email adapter (SES in AWS, the outbox locally): recipients
 * validated by the contract, one message per recipient counted against the plan's daily limit
 * (EMAIL_DAILY_LIMITS), each with an audit record written before it is sent. Only a plan in force
 * counts: an ended subscription keeps its plan name on record but sends nothing (admins: network).
 */
const dayOf = (now: Date) => now.toISOString().slice(0, 10);

type EmailPlan = keyof typeof EMAIL_DAILY_LIMITS;

async function planLimit(userId: string) {
  const { access } = await planAccess(userId);
  const inForce = access.isAdmin || access.subscriptionActive;
  const name = inForce && access.limits && Object.hasOwn(EMAIL_DAILY_LIMITS, access.limits.name) ? (access.limits.name as EmailPlan) : undefined;
  return { access, plan: name ?? null, limit: name ? EMAIL_DAILY_LIMITS[name] : 0 };
}

const view = (a: EmailAudit) => ({ messageId: a.messageId, to: a.to, subject: a.subject, status: a.status, createdAt: a.createdAt });

export const skill: SkillModule = {
  name: 'email',
  actions: {
    send: action(bodies().send, async (call, body) => {
      const recipients = [...new Set((Array.isArray(body.to) ? body.to : [body.to]).map((t) => t.toLowerCase()))];
      const day = dayOf(call.now);
      const { access, plan, limit } = await planLimit(call.userId);
      if (!plan) requirePlan(access);
      try {
        await reserveEmails(call.userId, day, recipients.length, limit);
      } catch (err) {
        if (err instanceof DailyLimitExceededError) {
          throw limitReached(`the ${plan} plan sends at most ${limit} emails a day`, 'EMAIL_DAILY_LIMIT', {
            limit,
            sentToday: await emailsSentOn(call.userId, day),
          });
        }
        throw err;
      }
      const results: ReturnType<typeof view>[] = [];
      for (const [i, to] of recipients.entries()) {
        const audit = await recordEmail(call.userId, {
          to,
          subject: body.subject,
          bytes: Buffer.byteLength(body.body),
          status: 'sending',
          requestId: call.requestId,
          ...(call.agentId ? { agentId: call.agentId } : {}),
          createdAt: call.now.toISOString(),
        });
        try {
          const providerId = await sendEmail({ to, subject: body.subject, text: body.body });
          await markEmail(call.userId, audit.messageId, 'sent', providerId);
          results.push(view({ ...audit, status: 'sent' }));
        } catch (err) {
          const rejected = err instanceof EmailRejectedError;
          await markEmail(call.userId, audit.messageId, rejected ? 'rejected' : 'failed');
          await giveBackEmails(call.userId, day, rejected ? 1 : recipients.length - i);
          if (!rejected) throw unavailable('the email service is unavailable, try again', 'EMAIL_UNAVAILABLE', { sent: results.length });
          results.push(view({ ...audit, status: 'rejected' }));
        }
      }
      return { messages: results, sent: results.filter((r) => r.status === 'sent').length };
    }),
    list: action(bodies().list, async (call, body) => {
      const messages = (await listEmails(call.userId, body.limit ?? 50)).map(view);
      return { messages, count: messages.length };
    }),
    usage: action(bodies().usage, async (call) => {
      const { plan, limit } = await planLimit(call.userId);
      const sentToday = await emailsSentOn(call.userId, dayOf(call.now));
      return { plan, limit, sentToday, remaining: Math.max(0, limit - sentToday) };
    }),
  },
};
