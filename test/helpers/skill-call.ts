import { randomUUID } from 'node:crypto';
import type { SkillCall, SkillModule } from '../../functions/skills/skill-module';
import { HttpError } from '../../shared/http/errors';

export interface SkillResult {
  status: number;
  body: any;
}

/**
 * Runs a skill module the way the skill pipeline does (the body's `action` picks the action, its
 * strict schema validates the whole body, the answer is `{success: true, ...data}`), straight
 * against DynamoDB Local. Failures come back as the status and `{error, code, ...}` the pipeline sends.
 */
export async function runSkill(skill: SkillModule, userId: string, body: Record<string, unknown>, extra: Partial<SkillCall> = {}): Promise<SkillResult> {
  const name = typeof body.action === 'string' ? body.action : undefined;
  const action = name && Object.hasOwn(skill.actions, name) ? skill.actions[name] : undefined;
  if (!action) return { status: 400, body: { error: 'invalid parameters', code: 'VALIDATION_ERROR', issues: [{ path: ['action'], message: `one of ${Object.keys(skill.actions).join(', ')}` }] } };
  const parsed = action.body.safeParse(body);
  if (!parsed.success) {
    return { status: 400, body: { error: 'invalid parameters', code: 'VALIDATION_ERROR', issues: parsed.error.issues.map((i: { path: PropertyKey[]; message: string }) => ({ path: i.path, message: i.message })) } };
  }
  const call: SkillCall = { userId, requestId: randomUUID(), now: new Date(), ...extra };
  try {
    return { status: 200, body: { success: true, ...(await action.run(call, parsed.data)) } };
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, body: { error: err.message, code: err.code, ...err.extra } };
    throw err;
  }
}

export const newTestUserId = () => `u_${randomUUID().replaceAll('-', '')}`;
