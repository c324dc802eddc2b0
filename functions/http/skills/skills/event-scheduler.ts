import { eventSchedulerActions as bodies } from '#contract/skill-actions/events';
import { cancelScheduledPost, listScheduledPosts, schedulePost } from '#data/skills/scheduled-posts';
import { invalid, notFound } from '#platform/errors';
import { action, type SkillModule } from '#domain/skills/skill-module';

/** Said with every answer: how a due post reaches its channels. */
const DELIVERY =
  "When due, the heartbeat worker posts each scheduled post once on each of its channels through the channel skills' connections (to the connection's defaultTarget) and marks it delivered, or failed with each channel's reason.";

export const skill: SkillModule = {
  name: 'event-scheduler',
  actions: {
    schedule: action(bodies().schedule, async (call, body) => {
      const scheduledFor = new Date(`${body.date}T${body.time}:00.000Z`);
      if (Number.isNaN(scheduledFor.getTime())) throw invalid('no such date', 'INVALID_DATE');
      if (scheduledFor.getTime() <= call.now.getTime()) throw invalid('the time is in the past', 'TIME_IN_PAST');
      const post = await schedulePost(
        call.userId,
        { title: body.title, message: body.message, channels: body.channels, scheduledFor: scheduledFor.toISOString() },
        call.now,
      );
      return { post, delivery: DELIVERY };
    }),
    list: action(bodies().list, async (call, body) => {
      const posts = (await listScheduledPosts(call.userId)).filter((p) => !body.status || p.status === body.status).map(({ sk: _sk, ...p }) => p);
      return { posts, count: posts.length, delivery: DELIVERY };
    }),
    cancel: action(bodies().cancel, async (call, body) => {
      const post = await cancelScheduledPost(call.userId, body.postId, call.now);
      if (!post) throw notFound('no such scheduled post');
      return { post };
    }),
  },
};
