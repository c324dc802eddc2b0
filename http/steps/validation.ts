import * as z from 'zod/mini';
import { schemasOf } from '#contract/route';
import { HttpError } from '../errors';
import { type PipelineRequest, routeOf } from './request-state';

type Issue = z.core.$ZodIssue;

/**
 * A union's own issue says only "Invalid input"; the branch that came closest (fewest issues) says
 * what to fix, so that is what the client gets.
 */
function flattenIssues(issues: readonly Issue[], base: PropertyKey[] = []): { path: PropertyKey[]; issue: Issue }[] {
  return issues.flatMap((issue) => {
    const path = [...base, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors.length) {
      const closest = [...issue.errors].sort((a, b) => a.length - b.length)[0]!;
      return flattenIssues(closest, path);
    }
    return [{ path, issue }];
  });
}

/** 400 VALIDATION_ERROR with the issues, for handlers that validate a body themselves. */
export function validationError(where: string, error: Pick<z.core.$ZodError, 'issues'>): HttpError {
  const issues = flattenIssues(error.issues).map(({ path, issue }) => {
    const keysNote = issue.code === 'unrecognized_keys' ? `: ${issue.keys.join(', ')}` : '';
    return { path: [where, ...path.map(String)].join('.'), message: issue.message + keysNote };
  });
  return new HttpError(400, `invalid request ${where}`, 'VALIDATION_ERROR', { issues });
}

function parseWith<S extends z.core.$ZodType | undefined>(schema: S, value: unknown, where: string) {
  if (!schema) return undefined;
  // The functional form takes any zod 4 schema, classic or mini (Lambda-side schemas are zod/mini).
  const out = z.safeParse(schema, value);
  if (!out.success) throw validationError(where, out.error);
  return out.data;
}

/** Path, query and body against the route's schemas (400 VALIDATION_ERROR); a body the handler validates, or a raw one, is passed as is. */
export function validateInput(request: PipelineRequest): void {
  const { event, internal } = request;
  const route = routeOf(request);
  const schemas = schemasOf(route);
  const params = parseWith(schemas.params, event.pathParameters ?? {}, 'params');
  const query = parseWith(schemas.query, event.queryStringParameters ?? {}, 'query');
  const body =
    route.bodyHandling?.validatedBy === 'handler' || route.bodyHandling?.kind === 'raw'
      ? internal.parsedBody
      : parseWith(schemas.body, internal.parsedBody, 'body');
  internal.input = { params, query, body };
}
