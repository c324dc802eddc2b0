import * as z from 'zod';
import { ResourceId } from '../memory';
import type { SkillActionBodies } from './index';

const AgentId = z.optional(ResourceId).describe("the agent whose stream to use; an agent's own runtime calls leave it out");

export const djStreamingBodies = {
  start_stream: z
    .strictObject({
      action: z.literal('start_stream'),
      agentId: AgentId,
      title: z.string().trim().min(1).max(200).optional(),
      genre: z.string().trim().min(1).max(100).optional(),
    })
    .describe("go live on the agent's stream (409 when a set is already live)"),
  stop_stream: z.strictObject({ action: z.literal('stop_stream'), agentId: AgentId }).describe('end the live set (409 when none is live)'),
  status: z.strictObject({ action: z.literal('status'), agentId: AgentId }).describe('live or idle, the set in progress and the stream'),
  list_sets: z.strictObject({ action: z.literal('list_sets'), agentId: AgentId }).describe('finished sets, newest first'),
};

export const djStreamingActions: SkillActionBodies = {
  bodies: djStreamingBodies,
  example: { action: 'start_stream', agentId: 'agt_3f9c2a', title: 'Friday night house set', genre: 'house' },
};
