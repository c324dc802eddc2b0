import { infraMcpConfig } from '#platform/config';
import { infraMcpContract } from '#contract/infra-mcp';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';
import { examplesBody, healthBody, infoBody, setupBody, toolsBody } from './content';
import { validateInfraMcpConfig } from './validate';

export const handler = createHandler(infraMcpContract, {
  getInfraMcpHealth: async () => healthBody(),
  getInfraMcpInfo: async () => infoBody(),
  getInfraMcpSetup: async () => setupBody(),
  listInfraMcpTools: async () => toolsBody(),
  listInfraMcpExamples: async () => examplesBody(),
  validateInfraMcpConfig: async ({ body }) => {
    const outcome = validateInfraMcpConfig(body);
    return outcome.valid ? outcome : reply.json(400, outcome);
  },
  redirectInfraMcpDocs: async () => reply.redirect(infraMcpConfig().docsUrl, 301),
  redirectInfraMcpGithub: async () => reply.redirect(infraMcpConfig().repoUrl, 301),
});
