import { infraMcpConfig } from '../../shared/config';
import { infraMcpContract } from '../../shared/contract/infra-mcp';
import { createHandler } from '../../shared/http/pipeline';
import { reply } from '../../shared/http/reply';
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
