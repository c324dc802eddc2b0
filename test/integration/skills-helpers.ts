import { expect } from 'vitest';
import { call, testSession, uniqueIp, type TestSession } from '../helpers/api';
import { subscribe } from './agents-helpers';

/** A signed-in user with an active subscription, who may call any catalogue skill. */
export async function skillUser(plan = 'solo'): Promise<TestSession> {
  const user = await testSession();
  await subscribe(user.userId, plan);
  return user;
}

export const callSkill = (user: TestSession, name: string, body: unknown) => call('POST', `/api/skills/${name}`, { session: user, body, ip: uniqueIp() });

/** Calls the skill and expects `{success: true, ...}`. */
export async function skillOk(user: TestSession, name: string, body: unknown) {
  const res = await callSkill(user, name, body);
  expect(res.status, res.text).toBe(200);
  expect(res.body.success).toBe(true);
  return res.body;
}

/** Each body must be refused with 400 VALIDATION_ERROR and issues. */
export async function expectRefused(user: TestSession, name: string, bodies: unknown[]) {
  for (const body of bodies) {
    const res = await callSkill(user, name, body);
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.issues.length).toBeGreaterThan(0);
  }
}
