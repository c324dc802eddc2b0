import type { Context } from 'aws-lambda';
import { logger } from '../../shared/http/logger';
import { runHeartbeat, type SweepResult } from './sweep';

/** Time kept back from the Lambda's limit to finish the users already taken. */
const SAFETY_MS = 30_000;

/** Scheduled heartbeat (EventBridge rule in CDK, a timer in the local stack): see sweep.ts. */
export const handler = async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SweepResult> => {
  const remaining = context?.getRemainingTimeInMillis?.();
  const result = await runHeartbeat({ deadline: remaining === undefined ? undefined : Date.now() + remaining - SAFETY_MS });
  logger().info('heartbeat run', { ...result });
  return result;
};
