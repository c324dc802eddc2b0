import * as z from 'zod/mini';
import { IsoDate } from './common';

/**
 * Status values the spec shows (section 3). `active` appears only in the detail form of spec 2.4;
 * the platform treats it as a synonym of `running` (same transitions) and writes `running` itself.
 */
export const AgentStatus = z.enum(['provisioning', 'running', 'stopped', 'error', 'active']);

/** Message record of `GET /api/agents/{id}/messages` (the spec leaves it open, 2.17). */
export const AgentMessage = z
  .object({
    id: z.string(),
    role: z.enum(['user', 'assistant', 'system']),
    content: z.string(),
    createdAt: IsoDate,
  })
  .check(z.describe('One message the agent received (`user`) or sent (`assistant`), or a `system` notice.'));
