// Plain JavaScript: the Tracer is not a dependency of the project, so this file stays out of the type check.
import { Tracer } from '@aws-lambda-powertools/tracer';

/** Tracing bench, "powertools": the same handler with the Powertools Tracer built at module scope, as its docs advise. */
const tracer = new Tracer({ serviceName: 'agent-platform' });
export const handler = async () => {
  tracer.getSegment();
  return { statusCode: 200 };
};
