import type { ApiEvent, PipelineMiddleware, PipelineRequest } from './request-state';

/** Headers a group adds to every answer, errors raised before its handler included (CORS). */
export type AnswerHeaders = (event: ApiEvent) => Record<string, string>;

export const answerHeaders = (headersOf: AnswerHeaders): PipelineMiddleware => {
  const add = (request: PipelineRequest) => {
    if (request.response) request.response.headers = { ...request.response.headers, ...headersOf(request.event) };
  };
  return { after: add, onError: add };
};

/** The `WWW-Authenticate` a group's 401 answers carry (RFC 6750), telling a client where to learn how to authenticate. */
export type Challenge = (event: ApiEvent) => string;

export const challengeOnUnauthorized = (challengeOf: Challenge): PipelineMiddleware => {
  const add = (request: PipelineRequest) => {
    if (request.response?.statusCode === 401) request.response.headers = { ...request.response.headers, 'www-authenticate': challengeOf(request.event) };
  };
  return { after: add, onError: add };
};
