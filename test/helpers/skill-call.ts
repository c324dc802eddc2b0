import { randomUUID } from 'node:crypto';
import { runSkill as runThroughPipeline } from '#functions/http/skills/call';
import type { SkillCall, SkillModule } from '#domain/skills/skill-module';
import { httpErrorOf } from '#http/domain-errors';

export interface SkillResult {
  status: number;
  body: any;
}

/**
 * Runs a registered skill through the skill call pipeline (functions/http/skills/call.ts: the action
 * picked from the body, its strict schema, `{success: true, ...data}`) straight against DynamoDB
 * Local, with a chosen clock where a computation depends on the time. Failures come back as the
 * status and `{error, code, ...}` body the HTTP pipeline sends for them.
 */
export async function runSkill(skill: SkillModule, userId: string, body: Record<string, unknown>, extra: Partial<SkillCall> = {}): Promise<SkillResult> {
  const call: SkillCall = { userId, requestId: randomUUID(), now: new Date(), ...extra };
  try {
    return { status: 200, body: await runThroughPipeline(skill.name, call, body) };
  } catch (err) {
    const http = httpErrorOf(err);
    if (http) return { status: http.status, body: { error: http.message, code: http.code, ...http.extra } };
    throw err;
  }
}

export const newTestUserId = () => `u_${randomUUID().replaceAll('-', '')}`;
