import { INFRA_MCP_API_KEY_MIN_LENGTH, INFRA_MCP_API_KEY_PREFIX, INFRA_MCP_VALIDATION_ERRORS as ERR } from '#contract/infra-mcp';

const KNOWN_FIELDS = new Set(['api_key', 'endpoint']);
const HELP = `Create an API key in the hosting platform dashboard (it starts with ${INFRA_MCP_API_KEY_PREFIX}); see /api/infra-mcp/setup for a complete configuration.`;

export type ValidationOutcome = { valid: true; message: string; next_steps: string[] } | { valid: false; errors: string[]; help: string };

function isHttpsUrl(value: string): boolean {
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

function apiKeyErrors(apiKey: unknown): string[] {
  if (apiKey === undefined || apiKey === null || apiKey === '') return [ERR.required];
  if (typeof apiKey !== 'string') return [ERR.keyNotString];
  const errors: string[] = [];
  if (!apiKey.startsWith(INFRA_MCP_API_KEY_PREFIX)) errors.push(ERR.prefix);
  if (apiKey.length < INFRA_MCP_API_KEY_MIN_LENGTH) errors.push(ERR.tooShort);
  return errors;
}

/**
 * Spec 4.13, entirely offline: the `endpoint` is checked for form only and never contacted, so
 * this route cannot be used to make the platform send requests anywhere.
 */
export function validateInfraMcpConfig(body: unknown): ValidationOutcome {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { valid: false, errors: [ERR.notObject], help: HELP };
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => !KNOWN_FIELDS.has(k));
  const errors = apiKeyErrors(fields.api_key);
  if ('endpoint' in fields && (typeof fields.endpoint !== 'string' || !isHttpsUrl(fields.endpoint))) errors.push(ERR.endpoint);
  if (unknown.length)
    errors.push(
      `${ERR.unknownFields}: ${unknown
        .slice(0, 10)
        .map((k) => k.slice(0, 64))
        .join(', ')}`,
    );
  if (errors.length) return { valid: false, errors, help: HELP };
  return {
    valid: true,
    message: 'The configuration is well formed.',
    next_steps: [
      'Add the server to your MCP client configuration (see /api/infra-mcp/setup).',
      'Restart your MCP client so it starts the server.',
      'Ask your assistant to set your workspace, then try "List my services".',
    ],
  };
}
