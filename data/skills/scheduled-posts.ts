import { randomBytes } from 'node:crypto';
import { dueInIndex } from '../due-index';
import { dueShardOf, HEARTBEAT_DUE_SHARDS } from '../heartbeat';
import * as keys from '../keys';
import { ConditionFailedError, tenant } from '../tenant';

/**
 * event-scheduler: announcements to post on the agent's channels at a time (UTC), sorted by that
 * time. While `scheduled` a post is in gsi1 under `POSTDUE#<shard>` with `gsi1sk` = its due time,
 * so the heartbeat worker reads only due posts. The worker claims a post (status `delivering`,
 * `gsi1sk` moved to the end of a lease, on the condition that `gsi1sk` is still the one it read),
 * delivers each channel once (recorded in `deliveries`), and settles it `delivered` or `failed`,
 * leaving the index. A worker that dies mid-delivery leaves the post due again when the lease
 * ends; the channels already delivered are skipped.
 */
export type PostStatus = 'scheduled' | 'cancelled' | 'delivering' | 'delivered' | 'failed';

export interface ChannelDelivery {
  status: 'delivered' | 'failed';
  at: string;
  externalId?: string;
  error?: string;
}

export interface ScheduledPost {
  postId: string;
  title: string;
  message?: string;
  scheduledFor: string;
  channels: string[];
  status: PostStatus;
  createdAt: string;
  deliveries?: Record<string, ChannelDelivery>;
  settledAt?: string;
}

export const POST_DUE_SHARDS = HEARTBEAT_DUE_SHARDS;

const sortIdOf = (post: Pick<ScheduledPost, 'scheduledFor' | 'postId'>) => `${post.scheduledFor}#${post.postId}`;

export async function schedulePost(userId: string, input: Omit<ScheduledPost, 'postId' | 'status' | 'createdAt'>, now = new Date()): Promise<ScheduledPost> {
  const post: ScheduledPost = { ...input, postId: `post_${randomBytes(8).toString('hex')}`, status: 'scheduled', createdAt: now.toISOString(), deliveries: {} };
  await tenant(userId).put(
    { ...keys.scheduledPost(userId, sortIdOf(post)), ...post, userId, gsi1pk: keys.scheduledPostDuePartition(dueShardOf(userId)), gsi1sk: post.scheduledFor },
    { expression: 'attribute_not_exists(pk)' },
  );
  return post;
}

const publicPost = ({ sk, postId, title, message, scheduledFor, channels, status, createdAt, deliveries, settledAt }: ScheduledPost & { sk: string }) => ({
  sk,
  postId,
  title,
  message,
  scheduledFor,
  channels,
  status,
  createdAt,
  deliveries: deliveries ?? {},
  ...(settledAt ? { settledAt } : {}),
});

/** Soonest first. */
export async function listScheduledPosts(userId: string): Promise<(ScheduledPost & { sk: string })[]> {
  const items = await tenant(userId).queryAll<ScheduledPost & Record<string, unknown>>(keys.scheduledPostPrefix);
  return items.map(publicPost);
}

/** Cancels a post not yet taken for delivery; undefined when the account has no such post. */
export async function cancelScheduledPost(userId: string, postId: string, now = new Date()): Promise<ScheduledPost | undefined> {
  const found = (await listScheduledPosts(userId)).find((p) => p.postId === postId);
  if (!found) return undefined;
  const { sk, ...post } = found;
  if (post.status !== 'scheduled') return post;
  try {
    await tenant(userId).update(
      keys.scheduledPost(userId, sk.slice(keys.scheduledPostPrefix.length)),
      {
        expression: 'SET #status = :cancelled, cancelledAt = :at REMOVE gsi1pk, gsi1sk',
        names: { '#status': 'status' },
        values: { ':cancelled': 'cancelled', ':at': now.toISOString() },
      },
      { expression: '#status = :scheduled', values: { ':scheduled': 'scheduled' } },
    );
  } catch (err) {
    if (err instanceof ConditionFailedError) return (await listScheduledPosts(userId)).find((p) => p.postId === postId);
    throw err;
  }
  return { ...post, status: 'cancelled' };
}

export type DuePost = ScheduledPost & Record<string, unknown> & { pk: string; sk: string; userId: string; gsi1sk: string };

/** One page of the posts of a shard that are due at `now`, oldest first. */
export const duePosts = (shard: number, now: Date, limit: number) => dueInIndex<DuePost>(keys.scheduledPostDuePartition(shard), now, limit);

const postKey = (post: DuePost) => keys.scheduledPost(post.userId, post.sk.slice(keys.scheduledPostPrefix.length));

/** Takes a due post for delivery until `leaseUntil`; undefined when another run took it first. */
export async function claimPost(post: DuePost, leaseUntil: Date): Promise<DuePost | undefined> {
  try {
    return await tenant(post.userId).update<DuePost>(
      postKey(post),
      {
        expression: 'SET #status = :delivering, gsi1sk = :lease, deliveries = if_not_exists(deliveries, :none)',
        names: { '#status': 'status' },
        values: { ':delivering': 'delivering', ':lease': leaseUntil.toISOString(), ':none': {} },
      },
      { expression: 'gsi1sk = :seen AND #status IN (:scheduled, :delivering)', values: { ':seen': post.gsi1sk, ':scheduled': 'scheduled' } },
    );
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}

/** Records one channel's outcome of a claimed post. */
export async function recordDelivery(post: DuePost, channel: string, outcome: ChannelDelivery): Promise<void> {
  await tenant(post.userId).update(postKey(post), {
    expression: 'SET deliveries.#channel = :outcome',
    names: { '#channel': channel },
    values: { ':outcome': outcome },
  });
}

/** Settles a claimed post and takes it out of the due index. */
export async function settlePost(post: DuePost, status: 'delivered' | 'failed', now: Date): Promise<void> {
  await tenant(post.userId).update(
    postKey(post),
    {
      expression: 'SET #status = :status, settledAt = :at REMOVE gsi1pk, gsi1sk',
      names: { '#status': 'status' },
      values: { ':status': status, ':at': now.toISOString() },
    },
    { expression: '#status = :delivering', values: { ':delivering': 'delivering' } },
  );
}
