import type { RouteDefinition } from '#contract/route';
import { readCookies } from '../cookies';
import { HttpError } from '../errors';
import type { PipelineRequest, Step } from './request-state';

/** The route of the event's route key (404 for another), and the headers, cookies and address every later step reads. */
export const findRoute =
  (routes: Map<string, RouteDefinition>): Step =>
  (request: PipelineRequest) => {
    const event = request.event;
    const route = routes.get(event.routeKey);
    if (!route) throw new HttpError(404, 'no such route', 'NOT_FOUND');
    request.internal.route = route;
    request.internal.headers = event.headers ?? {};
    request.internal.cookies = readCookies(event);
    request.internal.ip = event.requestContext?.http?.sourceIp ?? 'unknown';
  };
