import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CfnResource, CloudFormationValidatePlugin, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { VALIDATE_AGAINST_DEFAULT_RULES } from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { API_ROOT_PATHS, consoleSecurityHeaders } from '#contract/console';
import { consoleRequestFunctionCode, WebConsoleStack } from '#lib/constructs/web-console';
import { addNagChecks } from '#lib/nag';
import { PlatformStack } from '#lib/platform-stack';
import { cdkContext, inspect, testApp, type Json } from './synth';

/**
 * The web console in AWS as bin/app.ts declares it: its own stack beside the platform's, a private
 * bucket read by CloudFront through origin access control, `/api/*` forwarded uncached to the HTTP
 * API on the same domain, the local server's security headers, and cdk-nag's packs satisfied. Both
 * stacks also pass CDK's built-in CloudFormation validation, which bin/app.ts leaves out of the
 * synthesis: registered here, with its errors kept as errors.
 */
const strictTemplateRules = { [VALIDATE_AGAINST_DEFAULT_RULES]: true };
const app = testApp({ ...cdkContext, 'aws:cdk:bundling-stacks': [], ...strictTemplateRules });
const env = { account: '123456789012', region: 'eu-west-1' };
const platform = new PlatformStack(app, 'AgentPlatform', { env });
const consoleStack = new WebConsoleStack(app, 'AgentPlatformConsole', { env, httpApi: platform.api.httpApi });
addNagChecks(app);
Validations.of(app).addPlugins(new CloudFormationValidatePlugin());
// Throws on any unacknowledged cdk-nag finding and any CloudFormation validation error of either stack.
const template = Template.fromStack(consoleStack);
const { ofType, resources } = inspect(template);

const distribution = ofType('AWS::CloudFront::Distribution')[0]![1].Properties.DistributionConfig as Json;
const originOf = (id: string) => (distribution.Origins as Json[]).find((o) => o.Id === id)!;

describe('web console stack', () => {
  it('keeps the files in a private, TLS-only bucket that only this distribution reads (origin access control)', () => {
    const [[bucketId, bucket]] = ofType('AWS::S3::Bucket') as [[string, Json]];
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(ofType('AWS::CloudFront::OriginAccessControl')).toHaveLength(1);
    const statements = ofType('AWS::S3::BucketPolicy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Json[]);
    const read = statements.find((s) => s.Principal?.Service === 'cloudfront.amazonaws.com')!;
    expect(read.Action).toBe('s3:GetObject');
    expect(JSON.stringify(read.Condition)).toContain('AWS:SourceArn');
    expect(statements.some((s) => s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false')).toBe(true);
    const s3Origin = (distribution.Origins as Json[]).find((o) => o.S3OriginConfig)!;
    expect(JSON.stringify(s3Origin.DomainName)).toContain(bucketId);
    expect(s3Origin.S3OriginConfig.OriginAccessIdentity).toBe('');
  });

  it('routes /api/* to the HTTP API on the same domain, uncached, every method, cookies and query passed', () => {
    const api = (distribution.CacheBehaviors as Json[]).find((b) => b.PathPattern === '/api/*')!;
    expect(api.AllowedMethods).toEqual(expect.arrayContaining(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']));
    // The managed CachingDisabled and AllViewerExceptHostHeader policies.
    expect(api.CachePolicyId).toBe('4135ea2d-6df8-44a3-9df3-4b5a84be39ad');
    expect(api.OriginRequestPolicyId).toBe('b689b0a8-53d0-40ab-baf2-68738e2966ac');
    const origin = originOf(api.TargetOriginId);
    expect(origin.CustomOriginConfig.OriginProtocolPolicy).toBe('https-only');
    const domain = JSON.stringify(origin.DomainName);
    expect(domain).toContain('Fn::ImportValue');
    expect(domain).toContain('.execute-api.eu-west-1.');
  });

  it('sends the local server’s security headers on the files and the API answers', () => {
    const [[policyId, policy]] = ofType('AWS::CloudFront::ResponseHeadersPolicy') as [[string, Json]];
    const security = policy.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
    const agentDomain = app.node.tryGetContext('agentDomain');
    expect(security.ContentSecurityPolicy.ContentSecurityPolicy).toBe(consoleSecurityHeaders(agentDomain)['content-security-policy']);
    expect(security.ContentSecurityPolicy.ContentSecurityPolicy).toContain(`connect-src 'self' https://*.${agentDomain} wss://*.${agentDomain};`);
    expect(security.ContentSecurityPolicy.ContentSecurityPolicy).toContain("frame-ancestors 'none'");
    expect(security.ContentTypeOptions.Override).toBe(true);
    expect(security.FrameOptions.FrameOption).toBe('DENY');
    expect(security.ReferrerPolicy.ReferrerPolicy).toBe(consoleSecurityHeaders(agentDomain)['referrer-policy']);
    const behaviours = [distribution.DefaultCacheBehavior as Json, ...(distribution.CacheBehaviors as Json[])];
    for (const b of behaviours) expect(b.ResponseHeadersPolicyId).toEqual({ Ref: policyId });
    expect(distribution.DefaultCacheBehavior.ViewerProtocolPolicy).toBe('redirect-to-https');
  });

  it('answers index.html for client routes on the files only (the API keeps its JSON 404s)', () => {
    const [[fnId, fn]] = ofType('AWS::CloudFront::Function') as [[string, Json]];
    expect(fn.Properties.FunctionCode).toContain("indexOf('/assets/')");
    expect(fn.Properties.FunctionCode).toContain("r.uri = '/index.html'");
    expect(JSON.stringify(distribution.DefaultCacheBehavior.FunctionAssociations)).toContain(fnId);
    const api = (distribution.CacheBehaviors as Json[]).find((b) => b.PathPattern === '/api/*')!;
    expect(api.FunctionAssociations).toBeUndefined();
    expect(distribution.CustomErrorResponses).toBeUndefined();
  });

  it('sends every API path at the root (/v1/*, /mcp*, /sse*, /.well-known/*) to the HTTP API like /api/*, so none falls back to the console', () => {
    const behaviours = distribution.CacheBehaviors as Json[];
    const api = behaviours.find((b) => b.PathPattern === '/api/*')!;
    expect(behaviours.map((b) => b.PathPattern).sort()).toEqual([...API_ROOT_PATHS].sort());
    for (const pattern of ['/v1/*', '/mcp*', '/sse*', '/.well-known/*']) {
      const b = behaviours.find((x) => x.PathPattern === pattern)!;
      expect(b, pattern).toMatchObject({
        TargetOriginId: api.TargetOriginId,
        AllowedMethods: api.AllowedMethods,
        CachePolicyId: api.CachePolicyId,
        OriginRequestPolicyId: api.OriginRequestPolicyId,
        ViewerProtocolPolicy: 'https-only',
      });
      expect(b.FunctionAssociations, pattern).toBeUndefined();
    }
  });

  it('answers any other path of the files with 404 JSON from the function (runtime 2.0, which may carry a body)', () => {
    const [[, fn]] = ofType('AWS::CloudFront::Function') as [[string, Json]];
    expect(fn.Properties.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
    expect(fn.Properties.FunctionCode).toBe(consoleRequestFunctionCode());
    expect(fn.Properties.FunctionCode).toContain('statusCode: 404');
  });

  it('deploys the built files: hashed assets cached for a year, index.html revalidated and invalidated', () => {
    const deployments = Object.values(resources).filter((r) => r.Type === 'Custom::CDKBucketDeployment');
    expect(deployments).toHaveLength(2);
    const cacheControls = deployments.map((d) => JSON.stringify(d.Properties.SystemMetadata));
    expect(cacheControls.some((c) => c.includes('immutable'))).toBe(true);
    expect(cacheControls.some((c) => c.includes('no-cache'))).toBe(true);
    expect(deployments.some((d) => JSON.stringify(d.Properties.DistributionPaths) === '["/index.html"]')).toBe(true);
  });

  it('leaves no unacknowledged cdk-nag finding', () => {
    for (const pack of [new AwsSolutionsChecks(), new ServerlessChecks()]) {
      const report = pack.validateScope(consoleStack);
      expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(' ')}`)).toEqual([]);
    }
  });
});

describe("CloudFormation's own template rules (CDK's built-in validation)", () => {
  it('find nothing in either stack, not even a warning', () => {
    const report = JSON.parse(readFileSync(path.join(app.synth().directory, 'validation-report.json'), 'utf8'));
    const findings = (report.pluginReports as Json[])
      .filter((r) => r.pluginName === CloudFormationValidatePlugin.PLUGIN_NAME)
      .flatMap((r) => (r.violations as Json[]).map((v) => `${v.ruleName}: ${v.description}`));
    expect(findings).toEqual([]);
  });

  it('fail a synthesis whose template breaks them (the rules are live)', () => {
    const probe = testApp(strictTemplateRules);
    const probeStack = new Stack(probe, 'Probe');
    new CfnResource(probeStack, 'Queue', { type: 'AWS::SQS::Queue', properties: { VisibilityTimeout: 'soon' } });
    Validations.of(probe).addPlugins(new CloudFormationValidatePlugin());
    expect(() => probe.synth()).toThrow(/VisibilityTimeout.*CloudFormation Validate/);
  });
});
