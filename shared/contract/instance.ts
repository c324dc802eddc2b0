import * as z from 'zod';
import { AgentStatus } from './agents';
import { ResourceId } from './memory';
import { commonErrorResponses, defineGroup, ErrorBody, IsoDate } from './route';

const UserIdParams = z.strictObject({ userId: ResourceId });

/**
 * Failure body of the lifecycle endpoints (spec 4.4). Loose so the pipeline's own answers
 * (`{error, code}` with `AUTH_REQUIRED` / `TOKEN_INVALID`) can carry the same two fields.
 */
export const LifecycleFailureBody = z.looseObject({
  success: z.literal(false),
  status: z.literal('error'),
  error: z.string().optional(),
  code: z.string().optional(),
});

const lifecycleFailures = {
  401: LifecycleFailureBody,
  403: LifecycleFailureBody,
  404: LifecycleFailureBody,
  409: LifecycleFailureBody,
  500: LifecycleFailureBody,
  502: LifecycleFailureBody,
} as const;

/** Repair and reset-memory return the backend's answer directly (spec 4.4), e.g. `{success, message}`. */
export const BackendActionBody = z.looseObject({
  success: z.literal(true),
  message: z.string(),
  status: AgentStatus.optional().describe('status after the action, when the backend reports it'),
});

export const UpdateInstanceBody = z.strictObject({
  runtimeVersion: z
    .string()
    .regex(/^[0-9A-Za-z][0-9A-Za-z._+-]{0,63}$/, 'must be a runtime version such as 2025.6.1')
    .optional()
    .describe('runtime engine version to move to; omitted means the latest the operator has approved'),
  image: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._/:@-]{0,254}$/, 'must be a container image reference')
    .optional()
    .describe('container image to run; must be one of the images the operator has approved, else 400 `IMAGE_NOT_ALLOWED`'),
});

/** Instance record (spec 2.5). */
export const InstanceRecord = z.object({
  userId: z.string(),
  status: AgentStatus,
  startedAt: IsoDate.nullable().describe('null while the instance has never run'),
  subdomain: z.string(),
  url: z.url({ protocol: /^https$/ }),
  plan: z.string(),
  runtimeVersion: z.string(),
});

/** Instance stats (spec 2.6). */
export const InstanceStats = z.object({
  userId: z.string(),
  cpu: z.string().regex(/^\d+(\.\d+)?%$/, 'must be a percentage such as `1.25%`'),
  memory: z.string().describe('memory in use, e.g. `120.5MiB`'),
  status: AgentStatus,
  plan: z.string(),
  runtimeVersion: z.string(),
});

const transitionDescription = (what: string) =>
  [
    what,
    'The path `userId` must be the caller\'s own id (403 otherwise); 404 when the account has no instance;',
    '409 when the current status does not allow the transition (see the agents group); 502 when the backend agent manager is unreachable.',
    'Every failure answers `{success: false, status: "error", error?}`.',
  ].join(' ');

export const instanceContract = defineGroup({
  group: 'instance',
  description: [
    'Lifecycle of the caller\'s agent instance (spec 4.4), proxied to the backend agent manager;',
    'session required, the caller must own the instance, rate limited by the `instance` scope (30 per minute).',
    'Transitions follow the agent state machine documented on the agents group: start from `stopped` or `error`;',
    'stop, restart and update from `running`; repair from `running` or `error`; reset-memory from any status but `provisioning`, keeping the status.',
    'Illegal transitions answer 409. Lifecycle failures carry `{success: false, status: "error"}` (plus `error`, and `code` for 401).',
  ].join(' '),
  dynamoOnly: false,
  routes: [
    {
      operation: 'startInstance',
      method: 'POST',
      path: '/api/instance/{userId}/start',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Start the instance (`stopped` or `error` → `running`).',
      description: transitionDescription('Starts the stopped or failed instance.'),
      params: UserIdParams,
      responses: {
        ...commonErrorResponses,
        200: z.object({ success: z.literal(true), status: z.literal('running') }),
        ...lifecycleFailures,
      },
    },
    {
      operation: 'stopInstance',
      method: 'POST',
      path: '/api/instance/{userId}/stop',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Stop the instance (`running` → `stopped`).',
      description: transitionDescription('Stops the running instance; memory and configuration are kept.'),
      params: UserIdParams,
      responses: {
        ...commonErrorResponses,
        200: z.object({ success: z.literal(true), status: z.literal('stopped') }),
        ...lifecycleFailures,
      },
    },
    {
      operation: 'restartInstance',
      method: 'POST',
      path: '/api/instance/{userId}/restart',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Restart the instance (`running` → `running`).',
      description: transitionDescription('Restarts the running instance; memory and installed skills are delivered again, so nothing is lost.'),
      params: UserIdParams,
      responses: {
        ...commonErrorResponses,
        200: z.object({ success: z.literal(true), status: z.literal('running') }),
        ...lifecycleFailures,
      },
    },
    {
      operation: 'updateInstance',
      method: 'POST',
      path: '/api/instance/{userId}/update',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Update the instance image / runtime version and restart it (`running` → `running`).',
      description: transitionDescription(
        'Triggers an image update on the backend. The optional body picks a runtime version or an operator-approved image; an empty or absent body moves to the latest approved version.',
      ),
      params: UserIdParams,
      body: UpdateInstanceBody.optional(),
      example: { runtimeVersion: '2025.6.1' },
      responses: {
        ...commonErrorResponses,
        200: z.object({ success: z.literal(true), status: z.literal('running') }),
        400: z.union([commonErrorResponses[400], z.looseObject({ error: z.string(), code: z.literal('IMAGE_NOT_ALLOWED') })]),
        ...lifecycleFailures,
      },
    },
    {
      operation: 'repairInstance',
      method: 'POST',
      path: '/api/instance/{userId}/repair',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Repair the instance (`running` or `error` → `running`); the backend answer is returned as is.',
      description: transitionDescription('Replaces a broken or failed instance with a fresh one carrying the same memory, skills and configuration.'),
      params: UserIdParams,
      responses: {
        ...commonErrorResponses,
        200: BackendActionBody,
        ...lifecycleFailures,
      },
    },
    {
      operation: 'resetInstanceMemory',
      method: 'POST',
      path: '/api/instance/{userId}/reset-memory',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: "Clear the memory of the caller's agents; the status is unchanged. The backend answer is returned as is.",
      description: transitionDescription('Deletes every stored memory entry of the account\'s agents and tells the running instance to drop its copy.'),
      params: UserIdParams,
      responses: {
        ...commonErrorResponses,
        200: BackendActionBody,
        ...lifecycleFailures,
      },
    },
    {
      operation: 'getInstance',
      method: 'GET',
      path: '/api/instance/{userId}',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: "Read the caller's instance record.",
      description: 'The path `userId` must be the caller\'s own id (403 otherwise); 404 when the account has no instance.',
      params: UserIdParams,
      responses: {
        ...commonErrorResponses,
        200: InstanceRecord,
        404: ErrorBody,
        502: ErrorBody,
      },
    },
    {
      operation: 'getInstanceStats',
      method: 'GET',
      path: '/api/instance/{userId}/stats',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: "Read the caller's instance CPU and memory figures.",
      description: 'The path `userId` must be the caller\'s own id (403 otherwise); 404 when the account has no instance; 502 when the backend is unreachable.',
      params: UserIdParams,
      responses: {
        ...commonErrorResponses,
        200: InstanceStats,
        404: ErrorBody,
        502: ErrorBody,
      },
    },
    {
      operation: 'getInstanceToken',
      method: 'GET',
      path: '/api/instance/{userId}/token',
      auth: 'session',
      errorFields: { success: false, status: 'error' },
      rateLimit: 'instance',
      summary: 'Read the gateway token the instance uses; one is generated (and stored encrypted) when none exists.',
      description:
        'Returns exactly the token the running instance checks. The path `userId` must be the caller\'s own id (403 otherwise); 502 when the backend is unreachable.',
      params: UserIdParams,
      responses: {
        ...commonErrorResponses,
        200: z.object({ token: z.string().min(1) }),
        404: ErrorBody,
        502: ErrorBody,
      },
    },
  ],
});
