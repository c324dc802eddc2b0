import * as z from 'zod/mini';
import { recordActivity } from '#data/idle-watch';
import { skillCallSignature, watchAgentCall } from '#domain/ai/loop-breaker';
import { validationError } from '#http/pipeline';
import type { SkillName } from '#contract/skills';
import { loadSkill } from './registry';
import type { SkillCall } from '#domain/skills/skill-module';
import { lazySchema } from '#contract/lazy-schema';

const ActionField = lazySchema(() => z.looseObject({ action: z.optional(z.string()) }));

/**
 * Runs one skill action: the body's `action` picks it, its strict schema validates the body (400
 * with the issues), and the answer is `{success: true, ...data}`.
 */
export async function runSkill(name: SkillName, call: SkillCall, body: unknown) {
  const skill = await loadSkill(name);
  const actionNames = Object.keys(skill.actions);
  const chosen = ActionField().safeParse(body ?? {});
  const actionName = (chosen.success ? chosen.data.action : undefined) ?? skill.defaultAction;
  const action = actionName !== undefined && Object.hasOwn(skill.actions, actionName) ? skill.actions[actionName]! : undefined;
  if (!action) {
    const unknownAction = z.object({ action: z.enum(actionNames as [string, ...string[]]) }).safeParse(body ?? {});
    // No `new z.core.$ZodError`: using `z.core` as a value keeps all of it (compile, JSON Schema) in the init chunk.
    throw validationError('body', unknownAction.error ?? { issues: [] });
  }
  const withAction = actionName === skill.defaultAction && typeof body === 'object' && body && !('action' in body) ? { ...body, action: actionName } : body;
  const parsed = action.body.safeParse(withAction);
  if (!parsed.success) throw validationError('body', parsed.error);
  // An agent's own skill call keeps its instance from idling; the owner's calls over the API do not.
  if (call.agentId) {
    // Refused while the loop breaker holds the agent; an identical call repeated past the limit trips it.
    await watchAgentCall(call.userId, call.agentId, skillCallSignature(name, parsed.data), call.now);
    await recordActivity(call.userId, call.now);
  }
  const data = await action.run(call, parsed.data);
  return { success: true as const, ...data };
}
