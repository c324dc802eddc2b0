import { platformContract } from '#contract/platform';
import { databaseAnswers } from '#data/health-probe';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';
import { logger } from '#http/logger';
import { classifyHealth, readHostVitals } from './health';

export const handler = createHandler(platformContract, {
  getHealth: async () => {
    const timestamp = new Date().toISOString();
    // A host with spare CPU is still unhealthy when its database does not answer (every route would fail).
    const [vitals, database] = await Promise.all([readHostVitals().catch((err: Error) => err), databaseAnswers()]);
    if (!database) return reply.json(503, { status: 'error', health: 'unhealthy', timestamp });
    try {
      if (vitals instanceof Error) throw vitals;
      return { status: 'ok', health: classifyHealth(vitals.cpu.usage, vitals.memory.usage), timestamp, ...vitals };
    } catch (err) {
      logger().error('health sampling failed', err as Error);
      return reply.json(500, { status: 'error', health: 'unhealthy', timestamp });
    }
  },
});
