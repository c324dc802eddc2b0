import { openApiDocument as buildOpenApiDocument } from '../../shared/contract/document';
import { platformContract } from '../../shared/contract/platform';
import { config } from '../../shared/config';
import { createHandler } from '../../shared/http/pipeline';
import { reply } from '../../shared/http/reply';
import { logger } from '../../shared/http/logger';
import { classifyHealth, readHostVitals } from './health';
import { API_VERSION } from './version';

let openApiDocument: unknown;

export const handler = createHandler(platformContract, {
  getHealth: async () => {
    const timestamp = new Date().toISOString();
    try {
      const vitals = await readHostVitals();
      return { status: 'ok', health: classifyHealth(vitals.cpu.usage, vitals.memory.usage), timestamp, ...vitals };
    } catch (err) {
      logger().error('health sampling failed', err as Error);
      return reply.json(500, { status: 'error', health: 'unhealthy', timestamp });
    }
  },
  getOpenApi: async () => {
    openApiDocument ??= buildOpenApiDocument({ version: API_VERSION, serverUrl: config().appUrl });
    return openApiDocument;
  },
});
