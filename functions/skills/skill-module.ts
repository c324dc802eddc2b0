import type * as z from 'zod';

/**
 * The shape every skill module is built to (agreed between both halves of issue 12). The pipeline
 * picks the action from the body's `action` field, validates the body with the action's strict
 * schema (400 with the issues otherwise) and answers `{success: true, ...data}`.
 */
export interface SkillCall {
  userId: string;
  agentId?: string;
  requestId: string;
  now: Date;
}

export interface SkillAction<B extends z.ZodObject = z.ZodObject> {
  body: B;
  run: (call: SkillCall, body: z.output<B>) => Promise<Record<string, unknown>>;
}

export interface SkillModule {
  name: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  actions: Record<string, SkillAction<any>>;
}
