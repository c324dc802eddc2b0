import { RawBody } from '../reply';
import type { ApiResult } from './request-state';

export const baseHeaders = (requestId: string) => ({
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-request-id': requestId,
});

/** An answer with the headers every answer carries; JSON unless the body is raw text, none for no body. */
export function toResult(status: number, body: unknown, requestId: string, headers: Record<string, string> = {}, cookies: string[] = []): ApiResult {
  const result: ApiResult = { statusCode: status, headers: { ...baseHeaders(requestId), ...headers } };
  if (body instanceof RawBody) result.body = body.text;
  else if (body !== undefined) result.body = JSON.stringify(body);
  else delete result.headers!['content-type'];
  if (cookies.length) result.cookies = cookies;
  return result;
}
