import { randomBytes } from 'node:crypto';
import { keys } from '../keys';
import { tenant } from '../tenant';

/**
 * event-scheduler: announcements to post on the agent's channels at a time (UTC), sorted by that
 * time. Delivery of due posts belongs to the channel adapters, which a later issue builds; until
 * then a post stays `scheduled`.
 */
export interface ScheduledPost {
  postId: string;
  title: string;
  message?: string;
  scheduledFor: string;
  channels: string[];
  status: 'scheduled' | 'cancelled';
  createdAt: string;
}

export async function schedulePost(userId: string, input: Omit<ScheduledPost, 'postId' | 'status' | 'createdAt'>, now = new Date()): Promise<ScheduledPost> {
  const post: ScheduledPost = { ...input, postId: `post_${randomBytes(8).toString('hex')}`, status: 'scheduled', createdAt: now.toISOString() };
  await tenant(userId).put({ ...keys.scheduledPost(userId, `${post.scheduledFor}#${post.postId}`), ...post }, { expression: 'attribute_not_exists(pk)' });
  return post;
}

/** Soonest first. */
export async function listScheduledPosts(userId: string): Promise<(ScheduledPost & { sk: string })[]> {
  const items = await tenant(userId).queryAll<ScheduledPost & Record<string, unknown>>(keys.scheduledPostPrefix);
  return items.map(({ sk, postId, title, message, scheduledFor, channels, status, createdAt }) => ({
    sk,
    postId,
    title,
    message,
    scheduledFor,
    channels,
    status,
    createdAt,
  }));
}

/** Cancels a scheduled post; undefined when the account has no such post. */
export async function cancelScheduledPost(userId: string, postId: string, now = new Date()): Promise<ScheduledPost | undefined> {
  const found = (await listScheduledPosts(userId)).find((p) => p.postId === postId);
  if (!found) return undefined;
  const { sk, ...post } = found;
  await tenant(userId).update(keys.scheduledPost(userId, sk.slice(keys.scheduledPostPrefix.length)), {
    expression: 'SET #status = :cancelled, cancelledAt = :at',
    names: { '#status': 'status' },
    values: { ':cancelled': 'cancelled', ':at': now.toISOString() },
  });
  return { ...post, status: 'cancelled' };
}
