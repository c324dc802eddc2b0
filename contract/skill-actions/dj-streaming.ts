import * as z from 'zod/mini';
import { ResourceId } from '../common';
import type { SkillActionBodies } from './index';
import { lazySchema } from '../route';

const AgentId = lazySchema(() => z.optional(ResourceId()).check(z.describe("the agent whose stream to use; an agent's own runtime calls leave it out")));

export const djStreamingBodies = lazySchema(() => ({
  start_stream: z
    .strictObject({
      action: z.literal('start_stream'),
      agentId: AgentId(),
      title: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200))),
      genre: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(100))),
    })
    .check(z.describe("go live on the agent's stream (409 when a set is already live)")),
  stop_stream: z.strictObject({ action: z.literal('stop_stream'), agentId: AgentId() }).check(z.describe('end the live set (409 when none is live)')),
  status: z.strictObject({ action: z.literal('status'), agentId: AgentId() }).check(z.describe('live or idle, the set in progress and the stream')),
  list_sets: z.strictObject({ action: z.literal('list_sets'), agentId: AgentId() }).check(z.describe('finished sets, newest first')),
}));

export const djStreamingActions: SkillActionBodies = {
  bodies: djStreamingBodies,
  example: { action: 'start_stream', agentId: 'agt_3f9c2a', title: 'Friday night house set', genre: 'house' },
};
