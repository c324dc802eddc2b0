import { claimPost, type DuePost, duePosts, POST_DUE_SHARDS, recordDelivery, settlePost } from '#data/skills/scheduled-posts';
import { logger } from '#http/logger';
import { type ChannelSkillName, sendText } from '#domain/skills/channel-skill';

/**
 * Delivers the event-scheduler posts that are due (run with every heartbeat): each post is
 * claimed first (so overlapping or retried runs never both take it), sent on each of its channels
 * through the channel adapters to the channel's default target, each channel's outcome recorded
 * once, and the post settled `delivered` (every channel) or `failed`.
 */

/** The event-scheduler channel names and the skill whose connection delivers them. */
const SKILL_OF_CHANNEL: Record<string, ChannelSkillName> = {
  chatBot: 'chat-bot',
  communityBot: 'community-bot',
  businessMessaging: 'business-messaging',
  teamChat: 'team-chat',
};

/** A run that dies mid-delivery leaves the post to the next run after this. */
const LEASE_MS = 5 * 60_000;
const PER_SHARD = 50;

export interface PostDeliveryResult {
  due: number;
  delivered: number;
  failed: number;
}

const textOf = (post: DuePost) => (post.message ? `${post.title}\n\n${post.message}` : post.title);

async function deliverOne(post: DuePost, now: Date): Promise<'lost' | 'delivered' | 'failed'> {
  const claimed = await claimPost(post, new Date(now.getTime() + LEASE_MS));
  if (!claimed) return 'lost';
  let allDelivered = true;
  for (const channel of claimed.channels) {
    if (claimed.deliveries?.[channel]?.status) {
      allDelivered &&= claimed.deliveries[channel].status === 'delivered';
      continue;
    }
    const skill = SKILL_OF_CHANNEL[channel];
    try {
      if (!skill) throw new Error(`unknown channel ${channel}`);
      const sent = await sendText(claimed.userId, skill, undefined, textOf(claimed), now, { postId: claimed.postId });
      await recordDelivery(claimed, channel, { status: 'delivered', at: now.toISOString(), externalId: sent.externalId });
    } catch (err) {
      allDelivered = false;
      // The adapters' messages name the app and its answer, never the token.
      await recordDelivery(claimed, channel, { status: 'failed', at: now.toISOString(), error: (err as Error).message.slice(0, 300) });
    }
  }
  const status = allDelivered ? 'delivered' : 'failed';
  await settlePost(claimed, status, now);
  return status;
}

export async function deliverDuePosts(now = new Date()): Promise<PostDeliveryResult> {
  const result: PostDeliveryResult = { due: 0, delivered: 0, failed: 0 };
  for (let shard = 0; shard < POST_DUE_SHARDS; shard += 1) {
    const due = await duePosts(shard, now, PER_SHARD);
    result.due += due.length;
    for (const post of due) {
      try {
        const outcome = await deliverOne(post, now);
        if (outcome !== 'lost') result[outcome] += 1;
      } catch (err) {
        logger().error('a scheduled post could not be delivered', { userId: post.userId, postId: post.postId, error: (err as Error).message });
      }
    }
  }
  return result;
}
