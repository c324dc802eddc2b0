import type { EventBridgeEvent } from 'aws-lambda';
import { logger } from '../../shared/http/logger';

/** ECS task state changes (EventBridge). Readiness from task events is built by the agents issue. */
export const handler = async (event: EventBridgeEvent<'ECS Task State Change', Record<string, unknown>>): Promise<void> => {
  logger().warn('task state event received before the handler was built', { id: event.id });
};
