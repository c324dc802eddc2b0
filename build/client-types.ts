import openapiTS, { astToString } from 'openapi-typescript';
import { openApiDocument } from '#contract/document';
import { API_VERSION } from '#contract/version';

const HEADER = '// Generated from the OpenAPI document by `npm run client` (openapi-typescript). Do not edit by hand.\n\n';

/** The client's TypeScript types for the current contract, exactly as `npm run client` writes them. */
export async function generateClientTypes(): Promise<string> {
  const document = openApiDocument({ version: API_VERSION });
  // openapi-typescript resolves every $ref while it walks the document, so an unresolvable one fails here.
  // defaultNonNullable off: a field with a default may be left out of a request body.
  const ast = await openapiTS(JSON.parse(JSON.stringify(document)), { alphabetize: true, defaultNonNullable: false });
  return HEADER + astToString(ast);
}
