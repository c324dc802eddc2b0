import { config } from '#platform/config';
import { HttpError } from '../errors';
import type { ApiEvent, PipelineRequest } from './request-state';

function bodyText(event: ApiEvent): string {
  if (!event.body) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

/** The body as text, refused with 413 above the configured size before anything parses it. */
export function capBody(request: PipelineRequest): void {
  const raw = bodyText(request.event);
  if (Buffer.byteLength(raw) > config().maxBodyBytes) throw new HttpError(413, 'request body too large', 'PAYLOAD_TOO_LARGE');
  request.internal.rawBody = raw;
}
