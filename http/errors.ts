/**
 * Every failure a handler or middleware means to answer with. The error handler turns it into the
 * spec's body `{error, code?, ...extra}`; anything else that is thrown becomes a logged 500.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string, code = 'BAD_REQUEST', extra?: Record<string, unknown>) => new HttpError(400, message, code, extra);
export const unauthorized = (message: string, code: string) => new HttpError(401, message, code);
export const forbidden = (message: string, code = 'FORBIDDEN', extra?: Record<string, unknown>) => new HttpError(403, message, code, extra);
export const notFound = (message = 'not found') => new HttpError(404, message, 'NOT_FOUND');
export const conflict = (message: string, code = 'CONFLICT', extra?: Record<string, unknown>) => new HttpError(409, message, code, extra);
export const gone = (message: string, extra?: Record<string, unknown>) => new HttpError(410, message, 'GONE', extra);
export const notImplemented = () => new HttpError(501, 'not implemented', 'NOT_IMPLEMENTED');
