import * as z from 'zod/mini';
import { commonErrorResponses, IsoDate } from './common';
import { defineGroup, lazySchema } from './route';

/** The hosting platform MCP server's tools by category (spec 4.13): 7 categories, 21 tools. */
export const INFRA_MCP_TOOL_CATEGORIES = {
  workspaces: ['list_workspaces', 'select_workspace', 'get_selected_workspace'],
  services: ['list_services', 'get_service', 'create_web_service', 'create_static_site', 'create_cron_job', 'update_environment_variables'],
  deployments: ['list_deploys', 'get_deploy'],
  logs: ['list_logs', 'list_log_label_values'],
  metrics: ['get_metrics'],
  postgres: ['list_postgres_instances', 'get_postgres', 'create_postgres', 'query_render_postgres'],
  key_value: ['list_key_value', 'get_key_value', 'create_key_value'],
} as const;

export type InfraMcpToolCategory = keyof typeof INFRA_MCP_TOOL_CATEGORIES;
export type InfraMcpToolName = (typeof INFRA_MCP_TOOL_CATEGORIES)[InfraMcpToolCategory][number];

/** The keys of `GET /api/infra-mcp/examples`. */
export const INFRA_MCP_USE_CASES = ['service_management', 'deployment_monitoring', 'database_management', 'monitoring_and_logs', 'troubleshooting'] as const;

export type InfraMcpUseCase = (typeof INFRA_MCP_USE_CASES)[number];

export const INFRA_MCP_API_KEY_PREFIX = 'rnd_';
export const INFRA_MCP_API_KEY_MIN_LENGTH = 20;

/** The error strings of `POST /api/infra-mcp/validate-config`: the first three exactly as the spec words them. */
export const INFRA_MCP_VALIDATION_ERRORS = {
  required: 'api_key is required',
  prefix: 'api_key must start with rnd_',
  tooShort: 'api_key appears too short',
  keyNotString: 'api_key must be a string',
  endpoint: 'endpoint must be an https URL',
  notObject: 'the request body must be a JSON object',
  unknownFields: 'unknown fields',
} as const;

const tools = <K extends InfraMcpToolCategory>(category: K) => z.array(z.enum(INFRA_MCP_TOOL_CATEGORIES[category]));

const examplesShape = () =>
  Object.fromEntries(INFRA_MCP_USE_CASES.map((useCase) => [useCase, z.array(z.string().check(z.minLength(1))).check(z.minLength(1))])) as {
    [K in InfraMcpUseCase]: z.ZodMiniArray<z.ZodMiniString>;
  };

export const InfraMcpHealthBody = lazySchema(() =>
  z.strictObject({
    name: z.string(),
    version: z.string(),
    description: z.string(),
    status: z.literal('operational'),
    official_repo: z.url(),
    docker_image: z.string(),
    documentation: z.url(),
    timestamp: IsoDate(),
  }),
);

export const InfraMcpInfoBody = lazySchema(() =>
  z.strictObject({
    name: z.string(),
    version: z.string(),
    description: z.string(),
    maintained_by: z.string(),
    repository: z.url(),
    docker_image: z.string(),
    documentation: z.url(),
    setup_guide: z.string().check(z.describe('where the setup guide is, e.g. `/api/infra-mcp/setup`')),
    features: z.array(z.string()),
  }),
);

export const InfraMcpSetupBody = lazySchema(() =>
  z.strictObject({
    title: z.string(),
    recommended_approach: z.string(),
    quick_start: z.strictObject({ step_1: z.string(), step_2: z.string(), step_3: z.string() }),
    docker_config_example: z.record(z.string(), z.json()).check(z.describe('an MCP client configuration that runs the server image')),
    documentation_links: z.record(z.string(), z.url()).check(z.describe('link name to URL')),
  }),
);

export const InfraMcpToolsBody = lazySchema(() =>
  z.strictObject({
    source: z.string(),
    tool_categories: z.strictObject({
      workspaces: tools('workspaces'),
      services: tools('services'),
      deployments: tools('deployments'),
      logs: tools('logs'),
      metrics: tools('metrics'),
      postgres: tools('postgres'),
      key_value: tools('key_value'),
    }),
    complete_reference: z.url(),
  }),
);

export const InfraMcpExamplesBody = lazySchema(() =>
  z.strictObject({
    description: z.string(),
    examples: z.strictObject(examplesShape()),
  }),
);

export const InfraMcpValidateConfigBody = lazySchema(() =>
  z.strictObject({
    api_key: z.optional(z.string()),
    endpoint: z.optional(z.string()),
  }),
);

export const InfraMcpValidateFailureBody = lazySchema(() =>
  z.strictObject({
    valid: z.literal(false),
    errors: z.array(z.string()).check(z.minLength(1), z.describe('the messages of INFRA_MCP_VALIDATION_ERRORS, or one naming a malformed body')),
    help: z.string(),
  }),
);

const RedirectBody = lazySchema(() => z.null().check(z.describe('no body; the target is in `Location`')));

export const infraMcpContract = defineGroup({
  group: 'infra-mcp',
  description: 'Informational gateway about the hosting platform MCP server (spec 4.13).',
  dynamoOnly: true,
  routes: [
    {
      operation: 'getInfraMcpHealth',
      method: 'GET',
      path: '/api/infra-mcp/health',
      auth: 'none',
      summary: 'Status of the MCP gateway, with the official repository, image and documentation.',
      responses: () => ({ 200: InfraMcpHealthBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'getInfraMcpInfo',
      method: 'GET',
      path: '/api/infra-mcp/info',
      auth: 'none',
      summary: 'What the MCP server is, who maintains it, where it lives and what it can do.',
      responses: () => ({ 200: InfraMcpInfoBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'getInfraMcpSetup',
      method: 'GET',
      path: '/api/infra-mcp/setup',
      auth: 'none',
      summary: 'How to set the MCP server up: recommended approach, three quick-start steps and an example configuration.',
      responses: () => ({ 200: InfraMcpSetupBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'listInfraMcpTools',
      method: 'GET',
      path: '/api/infra-mcp/tools',
      auth: 'none',
      summary: "The MCP server's 21 tools in their 7 categories.",
      responses: () => ({ 200: InfraMcpToolsBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'listInfraMcpExamples',
      method: 'GET',
      path: '/api/infra-mcp/examples',
      auth: 'none',
      summary: 'Example prompts for five use cases.',
      responses: () => ({ 200: InfraMcpExamplesBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'validateInfraMcpConfig',
      method: 'POST',
      path: '/api/infra-mcp/validate-config',
      auth: 'none',
      summary: `Check an MCP configuration: \`api_key\` is required, must start with \`${INFRA_MCP_API_KEY_PREFIX}\` and be at least ${INFRA_MCP_API_KEY_MIN_LENGTH} characters.`,
      description:
        'The check is offline: the key is never stored, logged or echoed back, and a given `endpoint` must be an https URL but is never contacted (no request leaves the platform). Any bad body, including a missing or malformed `api_key`, a malformed `endpoint` or an unknown field, answers 400 `{valid: false, errors, help}` rather than the generic validation error.',
      body: InfraMcpValidateConfigBody,
      bodyHandling: { validatedBy: 'handler' },
      example: { api_key: 'rnd_Xk29fLmQ7pR4tV8wZc1N', endpoint: 'https://api.example.com/v1' },
      responses: () => ({
        ...commonErrorResponses(),
        200: z.strictObject({ valid: z.literal(true), message: z.string(), next_steps: z.array(z.string()) }),
        400: InfraMcpValidateFailureBody(),
      }),
    },
    {
      operation: 'redirectInfraMcpDocs',
      method: 'GET',
      path: '/api/infra-mcp/docs',
      auth: 'none',
      summary: 'Permanent redirect (301) to the vendor documentation.',
      responses: () => ({ 301: RedirectBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'redirectInfraMcpGithub',
      method: 'GET',
      path: '/api/infra-mcp/github',
      auth: 'none',
      summary: 'Permanent redirect (301) to the vendor repository.',
      responses: () => ({ 301: RedirectBody(), ...commonErrorResponses() }),
    },
  ],
});
