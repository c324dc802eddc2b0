import { infraMcpConfig } from '#platform/config';
import { INFRA_MCP_API_KEY_PREFIX, INFRA_MCP_TOOL_CATEGORIES, type InfraMcpUseCase } from '#contract/infra-mcp';

/**
 * The informational answers of spec 4.13. They describe the hosting platform's own MCP server; the
 * links and the image come from configuration so an operator can point them at the vendor's.
 */
const NAME = 'Hosting Platform MCP Server';
const VERSION = '1.0.0';
const DESCRIPTION =
  'Model Context Protocol server that lets AI assistants manage hosting platform services, deployments, logs, metrics and databases in natural language.';
const API_KEY_ENV = 'INFRA_API_KEY';

const links = () => {
  const { docsUrl, repoUrl, dockerImage } = infraMcpConfig();
  return { docsUrl, repoUrl, dockerImage };
};

export function healthBody(now = new Date()) {
  const { docsUrl, repoUrl, dockerImage } = links();
  return {
    name: NAME,
    version: VERSION,
    description: DESCRIPTION,
    status: 'operational' as const,
    official_repo: repoUrl,
    docker_image: dockerImage,
    documentation: docsUrl,
    timestamp: now.toISOString(),
  };
}

export function infoBody() {
  const { docsUrl, repoUrl, dockerImage } = links();
  return {
    name: NAME,
    version: VERSION,
    description: DESCRIPTION,
    maintained_by: 'the hosting platform',
    repository: repoUrl,
    docker_image: dockerImage,
    documentation: docsUrl,
    setup_guide: '/api/infra-mcp/setup',
    features: [
      'Workspace selection',
      'Service management: web services, static sites and cron jobs',
      'Environment variable updates',
      'Deploy history and status',
      'Log search and filtering',
      'Service metrics',
      'Postgres instances, including read-only SQL queries',
      'Key-value stores',
    ],
  };
}

export function setupBody() {
  const { docsUrl, repoUrl, dockerImage } = links();
  return {
    title: `${NAME} setup`,
    recommended_approach: 'Run the official server image from your MCP client (Docker), with your hosting platform API key in its environment.',
    quick_start: {
      step_1: `Create an API key in the hosting platform dashboard (Account Settings → API Keys); it starts with ${INFRA_MCP_API_KEY_PREFIX}.`,
      step_2: 'Add the server to your MCP client configuration, as in docker_config_example.',
      step_3: 'Restart the client, then ask it to set your workspace, e.g. "Set my workspace to <name>".',
    },
    docker_config_example: {
      mcpServers: {
        'infra-platform': {
          command: 'docker',
          args: ['run', '-i', '--rm', '-e', API_KEY_ENV, dockerImage],
          env: { [API_KEY_ENV]: `${INFRA_MCP_API_KEY_PREFIX}your_api_key_here` },
        },
      },
    },
    documentation_links: {
      documentation: docsUrl,
      repository: repoUrl,
    },
  };
}

export function toolsBody() {
  const { docsUrl } = links();
  const categories = Object.fromEntries(Object.entries(INFRA_MCP_TOOL_CATEGORIES).map(([category, names]) => [category, [...names]]));
  return {
    source: 'Official hosting platform MCP server',
    tool_categories: categories as { -readonly [K in keyof typeof INFRA_MCP_TOOL_CATEGORIES]: (typeof INFRA_MCP_TOOL_CATEGORIES)[K][number][] },
    complete_reference: docsUrl,
  };
}

const EXAMPLES: Record<InfraMcpUseCase, string[]> = {
  service_management: [
    'List all my services',
    'Create a new web service from my repository with the start command "npm start"',
    'Update the environment variables of my API service',
  ],
  deployment_monitoring: ['Show the latest deploys of my web service', 'Why did the most recent deploy fail?'],
  database_management: [
    'Create a new Postgres database named "app-db"',
    'How many users signed up in the last 7 days? (read-only query)',
    'List my key-value stores',
  ],
  monitoring_and_logs: ['Show the error logs of my API service from the last hour', 'What was the CPU usage of my service yesterday?'],
  troubleshooting: ['Why is my service returning 500 errors?', 'Find the slowest endpoints in my logs and suggest fixes'],
};

export function examplesBody() {
  return {
    description: 'Example prompts for an AI assistant connected to the hosting platform MCP server.',
    examples: EXAMPLES,
  };
}
