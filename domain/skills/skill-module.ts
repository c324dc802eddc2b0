import type * as z from 'zod/mini';
import type { SkillName } from '#contract/skills';

/**
 * The shape every skill is built to (spec 4.8). A skill is one file under `functions/http/skills/skills/`
 * exporting `skill: SkillModule`; the pipeline validates the body against the chosen action's
 * schema, runs it, and answers `{success: true, ...data}`.
 */

/** Who is calling and when: a user's session calls directly, an agent calls through its runtime. */
export interface SkillCall {
  userId: string;
  /** Set when the agent's runtime makes the call (the skill is installed on that agent). */
  agentId?: string;
  requestId: string;
  now: Date;
}

/** What a skill answers beyond `success`: a plain JSON object. */
export type SkillData = Record<string, unknown>;

export interface SkillAction<B extends z.ZodMiniObject = z.ZodMiniObject> {
  /** A strict object holding the action's fields, `action` included (`z.literal('<name>')`). */
  body: B;
  // Method syntax on purpose: a module's map holds actions with different body types.
  run(call: SkillCall, body: z.output<B>): Promise<SkillData>;
}

export interface SkillModule {
  name: SkillName;
  /** Action name → action; the body's `action` field selects one. */
  actions: Record<string, SkillAction>;
  /** The action a body without `action` runs (only for skills whose spec gives one action). */
  defaultAction?: string;
}

/** Keeps the body type of an action for its `run` (a plain object literal would widen it). */
export const action = <B extends z.ZodMiniObject>(body: B, run: (call: SkillCall, body: z.output<B>) => Promise<SkillData>): SkillAction<B> => ({ body, run });
