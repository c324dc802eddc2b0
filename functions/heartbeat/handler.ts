import { logger } from '../../shared/http/logger';

/** Scheduled heartbeat (EventBridge). The due-user sweep is built by the heartbeat issue. */
export const handler = async (): Promise<{ checked: number }> => {
  logger().warn('heartbeat sweep not built yet');
  return { checked: 0 };
};
