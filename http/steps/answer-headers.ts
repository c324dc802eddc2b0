import type { ApiEvent, PipelineMiddleware, PipelineRequest } from './request-state';

/** Headers a group adds to every answer, errors raised before its handler included (CORS). */
export type AnswerHeaders = (event: ApiEvent) => Record<string, string>;

export const answerHeaders = (headersOf: AnswerHeaders): PipelineMiddleware => {
  const add = (request: PipelineRequest) => {
    if (request.response) request.response.headers = { ...request.response.headers, ...headersOf(request.event) };
  };
  return { after: add, onError: add };
};
