import { HttpError } from '../errors';
import { isJsonContentType, jsonNestingExceeds, MAX_JSON_DEPTH } from '../request-guards';
import { type PipelineRequest, routeOf } from './request-state';

/** The body parsed as JSON, for routes with a body not taken raw; only a JSON content type, nested no deeper than the cap. */
export function parseJsonBody(request: PipelineRequest): void {
  const route = routeOf(request);
  if (!route.body || route.bodyHandling?.kind === 'raw') return;
  const raw = request.internal.rawBody!;
  const headers = request.internal.headers!;
  // Only JSON is read as JSON: a `text/plain` body is what a cross-site form can send without a preflight.
  if (raw.trim() !== '' && !isJsonContentType(headers['content-type'])) {
    const spec400 = route.bodyHandling?.nonJsonStatus === 400;
    throw new HttpError(
      spec400 ? 400 : 415,
      'the request body must be sent as Content-Type: application/json',
      spec400 ? 'UNSUPPORTED_CONTENT_TYPE' : 'UNSUPPORTED_MEDIA_TYPE',
    );
  }
  if (jsonNestingExceeds(raw)) throw new HttpError(400, `request body nests deeper than ${MAX_JSON_DEPTH} levels`, 'JSON_TOO_DEEP');
  try {
    request.internal.parsedBody = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch {
    throw new HttpError(400, 'request body is not valid JSON', 'INVALID_JSON');
  }
}
