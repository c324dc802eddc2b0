import { config } from '../../shared/config';
import { apiDocumentContract } from '../../shared/contract/api-document';
import { openApiDocument as buildOpenApiDocument } from '../../shared/contract/document';
import { createHandler } from '../../shared/http/pipeline';
import { API_VERSION } from './version';

let openApiDocument: unknown;

export const handler = createHandler(apiDocumentContract, {
  getOpenApi: async () => {
    openApiDocument ??= buildOpenApiDocument({ version: API_VERSION, serverUrl: config().appUrl });
    return openApiDocument;
  },
});
