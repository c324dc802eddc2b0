import * as z from 'zod/mini';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RouteDefinition } from '#contract/route';
import { reloadConfig, infraMcpConfig } from '#platform/config';
import { infraMcpContract, INFRA_MCP_TOOL_CATEGORIES, INFRA_MCP_USE_CASES } from '#contract/infra-mcp';
import { call } from '../helpers/api';

/** The contract's schema of one answer, to check bodies against what the OpenAPI document promises. */
const schemaOf = (operation: string, status: number) =>
  (infraMcpContract.routes.find((r) => r.operation === operation) as RouteDefinition).responses()[status]!;
const validate = (body: unknown) => call('POST', '/api/infra-mcp/validate-config', { rawBody: JSON.stringify(body) });

afterEach(() => {
  reloadConfig({ INFRA_MCP_DOCS_URL: undefined, INFRA_MCP_REPO_URL: undefined });
});

describe('informational endpoints (spec 4.13)', () => {
  it('health has exactly the spec keys, status operational, and the configured links', async () => {
    const res = await call('GET', '/api/infra-mcp/health');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['description', 'docker_image', 'documentation', 'name', 'official_repo', 'status', 'timestamp', 'version']);
    expect(res.body.status).toBe('operational');
    expect(res.body.official_repo).toBe(infraMcpConfig().repoUrl);
    expect(res.body.documentation).toBe(infraMcpConfig().docsUrl);
    expect(z.safeParse(schemaOf('getInfraMcpHealth', 200), res.body).success).toBe(true);
  });

  it('info has exactly the spec keys', async () => {
    const res = await call('GET', '/api/infra-mcp/info');
    expect(Object.keys(res.body).sort()).toEqual(
      ['description', 'docker_image', 'documentation', 'features', 'maintained_by', 'name', 'repository', 'setup_guide', 'version'].sort(),
    );
    expect(res.body.features.length).toBeGreaterThan(0);
    expect(z.safeParse(schemaOf('getInfraMcpInfo', 200), res.body).success).toBe(true);
  });

  it('setup has the three quick-start steps and a docker configuration example', async () => {
    const res = await call('GET', '/api/infra-mcp/setup');
    expect(Object.keys(res.body).sort()).toEqual(['docker_config_example', 'documentation_links', 'quick_start', 'recommended_approach', 'title']);
    expect(Object.keys(res.body.quick_start)).toEqual(['step_1', 'step_2', 'step_3']);
    expect(JSON.stringify(res.body.docker_config_example)).toContain(infraMcpConfig().dockerImage);
    expect(z.safeParse(schemaOf('getInfraMcpSetup', 200), res.body).success).toBe(true);
  });

  it('tools lists the 7 categories and their 21 tools exactly as the spec names them', async () => {
    const res = await call('GET', '/api/infra-mcp/tools');
    expect(Object.keys(res.body).sort()).toEqual(['complete_reference', 'source', 'tool_categories']);
    expect(res.body.tool_categories).toEqual({
      workspaces: ['list_workspaces', 'select_workspace', 'get_selected_workspace'],
      services: ['list_services', 'get_service', 'create_web_service', 'create_static_site', 'create_cron_job', 'update_environment_variables'],
      deployments: ['list_deploys', 'get_deploy'],
      logs: ['list_logs', 'list_log_label_values'],
      metrics: ['get_metrics'],
      postgres: ['list_postgres_instances', 'get_postgres', 'create_postgres', 'query_render_postgres'],
      key_value: ['list_key_value', 'get_key_value', 'create_key_value'],
    });
    expect(Object.values(res.body.tool_categories).flat()).toHaveLength(21);
    expect(res.body.tool_categories).toEqual(JSON.parse(JSON.stringify(INFRA_MCP_TOOL_CATEGORIES)));
    expect(z.safeParse(schemaOf('listInfraMcpTools', 200), res.body).success).toBe(true);
  });

  it('examples has the 5 use cases, each with prompts', async () => {
    const res = await call('GET', '/api/infra-mcp/examples');
    expect(Object.keys(res.body).sort()).toEqual(['description', 'examples']);
    expect(Object.keys(res.body.examples).sort()).toEqual([
      'database_management',
      'deployment_monitoring',
      'monitoring_and_logs',
      'service_management',
      'troubleshooting',
    ]);
    expect(Object.keys(res.body.examples).sort()).toEqual([...INFRA_MCP_USE_CASES].sort());
    expect(z.safeParse(schemaOf('listInfraMcpExamples', 200), res.body).success).toBe(true);
  });

  it('docs and github are 301 redirects to the configured vendor URLs', async () => {
    reloadConfig({ INFRA_MCP_DOCS_URL: 'https://docs.vendor.example/mcp', INFRA_MCP_REPO_URL: 'https://code.vendor.example/org/mcp-server' });
    const docs = await call('GET', '/api/infra-mcp/docs');
    expect(docs.status).toBe(301);
    expect(docs.headers.location).toBe('https://docs.vendor.example/mcp');
    expect(docs.text).toBeUndefined();
    const repo = await call('GET', '/api/infra-mcp/github');
    expect(repo.status).toBe(301);
    expect(repo.headers.location).toBe('https://code.vendor.example/org/mcp-server');
  });

  it('refuses a redirect target that is not https at configuration time', () => {
    expect(() => reloadConfig({ INFRA_MCP_DOCS_URL: 'http://docs.vendor.example/mcp' })).toThrow(/INFRA_MCP_DOCS_URL/);
  });
});

describe('POST /api/infra-mcp/validate-config', () => {
  /** Records every connection and request, to prove the endpoint is never contacted. */
  let server: Server;
  let port: number;
  let contacts = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('{}'));
    server.on('connection', () => {
      contacts += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const VALID_KEY = 'rnd_Xk29fLmQ7pR4tV8wZc1N';

  it('accepts a well-formed key with {valid: true, message, next_steps} and never echoes the key', async () => {
    const res = await validate({ api_key: VALID_KEY });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ valid: true, message: expect.any(String), next_steps: expect.any(Array) });
    expect(res.body.next_steps.length).toBeGreaterThan(0);
    expect(res.text).not.toContain(VALID_KEY);
    expect(z.safeParse(schemaOf('validateInfraMcpConfig', 200), res.body).success).toBe(true);
  });

  it('accepts a key of exactly 20 characters and refuses 19', async () => {
    expect((await validate({ api_key: `rnd_${'a'.repeat(16)}` })).status).toBe(200);
    const short = await validate({ api_key: `rnd_${'a'.repeat(15)}` });
    expect(short.status).toBe(400);
    expect(short.body.errors).toEqual(['api_key appears too short']);
  });

  it.each([
    ['no api_key', {}, ['api_key is required']],
    ['an empty api_key', { api_key: '' }, ['api_key is required']],
    ['a null api_key', { api_key: null }, ['api_key is required']],
    ['a wrong prefix', { api_key: 'sk_live_0123456789abcdefgh' }, ['api_key must start with rnd_']],
    ['a short key', { api_key: 'rnd_short' }, ['api_key appears too short']],
    ['a short key with a wrong prefix', { api_key: 'abc' }, ['api_key must start with rnd_', 'api_key appears too short']],
  ])('%s → 400 with the spec error strings', async (_label, body, errors) => {
    const res = await validate(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ valid: false, errors, help: expect.any(String) });
    expect(z.safeParse(schemaOf('validateInfraMcpConfig', 400), res.body).success).toBe(true);
  });

  it.each([
    ['an unknown field', { api_key: VALID_KEY, region: 'eu' }],
    ['a non-string api_key', { api_key: 12345678901234567890 }],
    ['a non-https endpoint', { api_key: VALID_KEY, endpoint: 'http://api.example.com' }],
    ['a malformed endpoint', { api_key: VALID_KEY, endpoint: 'not a url' }],
    ['a non-string endpoint', { api_key: VALID_KEY, endpoint: 42 }],
    ['an array body', [VALID_KEY]],
    ['a null body', null],
  ])('%s → the 400 failure shape', async (_label, body) => {
    const res = await validate(body);
    expect(res.status).toBe(400);
    expect(res.body.valid).toBe(false);
    expect(res.body.errors.length).toBeGreaterThan(0);
    expect(z.safeParse(schemaOf('validateInfraMcpConfig', 400), res.body).success).toBe(true);
    expect(res.text).not.toContain(VALID_KEY);
  });

  it('checks the endpoint for form only and never contacts it', async () => {
    const https = await validate({ api_key: VALID_KEY, endpoint: `https://127.0.0.1:${port}/v1` });
    expect(https.status).toBe(200);
    const http = await validate({ api_key: VALID_KEY, endpoint: `http://127.0.0.1:${port}/v1` });
    expect(http.status).toBe(400);
    expect(http.body.errors).toEqual(['endpoint must be an https URL']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(contacts).toBe(0);

    // The recorder does record: a real request is seen.
    await fetch(`http://127.0.0.1:${port}/`);
    expect(contacts).toBe(1);
  });
});
