import { config } from '#platform/config';
import { apiDocumentContract } from '#contract/api-document';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';
import { API_VERSION } from '#contract/version';

/**
 * The document is generated from every contract group: its builder is loaded on the first request
 * (a lazy chunk, so the cold start carries only this group) and the serialized text is kept for the
 * life of the container, since the contract cannot change under a running function.
 */
let openApiText: Promise<string> | undefined;

async function serializeOpenApi(): Promise<string> {
  const { openApiDocument } = await import('#contract/document');
  return JSON.stringify(openApiDocument({ version: API_VERSION, serverUrl: config().appUrl }));
}

export const handler = createHandler(apiDocumentContract, {
  getOpenApi: async () => {
    openApiText ??= serializeOpenApi().catch((error: unknown) => {
      openApiText = undefined;
      throw error;
    });
    return reply.text(200, await openApiText, { 'content-type': 'application/json; charset=utf-8' });
  },
});
