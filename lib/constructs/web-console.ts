import { type CfnElement, CfnOutput, DefaultStackSynthesizer, Duration, RemovalPolicy, Stack, type StackProps, Token, Validations } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  PriceClass,
  ResponseHeadersPolicy,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { ASSET_PREFIX, CONSOLE_DIST, ensureConsoleBuilt } from '#build/web-console';
import { API_ROOT_PATHS, CONSOLE_ROUTES_PATTERN, consoleSecurityHeaders, NOT_FOUND_BODY } from '#contract/console';

/**
 * The web console in AWS, on one origin with the API so the session cookie stays first-party:
 * CloudFront serves the built files from a private S3 bucket (origin access control; the bucket is
 * never public) and forwards the API's paths (`/api/*`, `/v1/*`, `/mcp*`, `/sse*`, `/.well-known/*`:
 * contract/console.ts) to the HTTP API uncached, whose miss is its own 404 JSON. Every answer
 * carries the same security headers as the local server's (local/console.ts), through a response
 * headers policy. On the files' behaviour a CloudFront Function rewrites the console's own client
 * routes (`/agents/…`, `/verify-email`, `/settings/billing`…) to index.html and answers 404 JSON for
 * any other path that is not an asset, so no client gets the console's page for a path it is not.
 */
export function consoleRequestFunctionCode(): string {
  return [
    `var CONSOLE_ROUTES = new RegExp(${JSON.stringify(CONSOLE_ROUTES_PATTERN)});`,
    'function handler(event) {',
    '  var r = event.request;',
    `  if (r.uri.indexOf('${ASSET_PREFIX}') === 0) return r;`,
    "  if (CONSOLE_ROUTES.test(r.uri)) { r.uri = '/index.html'; return r; }",
    '  return {',
    "    statusCode: 404, statusDescription: 'Not Found',",
    "    headers: { 'content-type': { value: 'application/json; charset=utf-8' }, 'cache-control': { value: 'no-store' } },",
    `    body: { encoding: 'text', data: ${JSON.stringify(NOT_FOUND_BODY)} },`,
    '  };',
    '}',
  ].join('\n');
}

export class WebConsole extends Construct {
  readonly bucket: Bucket;
  readonly distribution: Distribution;
  readonly headers: ResponseHeadersPolicy;

  constructor(scope: Construct, id: string, props: { httpApi: IHttpApi; agentDomain?: string }) {
    super(scope, id);
    ensureConsoleBuilt();
    const stack = Stack.of(this);

    this.bucket = new Bucket(this, 'Files', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      // Build output, redeployed by every `cdk deploy`: nothing to keep.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.headers = new ResponseHeadersPolicy(this, 'SecurityHeaders', {
      comment: 'The web console and API security headers (the local server sends the same)',
      securityHeadersBehavior: {
        // The agents' subdomains (the stage's agentDomain) in connect-src: the console's chat opens their websockets through the edge.
        contentSecurityPolicy: {
          contentSecurityPolicy: consoleSecurityHeaders(props.agentDomain ?? this.node.tryGetContext('agentDomain'))['content-security-policy'],
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
      },
    });

    const spaFallback = new CloudFrontFunction(this, 'SpaFallback', {
      comment: "The console's client routes answer index.html, hashed assets pass through, any other path 404 JSON",
      // Runtime 2.0: a generated response may carry a body.
      runtime: FunctionRuntime.JS_2_0,
      code: FunctionCode.fromInline(consoleRequestFunctionCode()),
    });

    const apiDomain = `${props.httpApi.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
    const apiBehaviour = {
      origin: new HttpOrigin(apiDomain, { protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY }),
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: AllowedMethods.ALLOW_ALL,
      // Every answer is per user: nothing is cached, and cookies, query and headers reach the API (not Host: API Gateway routes by its own).
      cachePolicy: CachePolicy.CACHING_DISABLED,
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      responseHeadersPolicy: this.headers,
    };
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Agent platform: web console and the API on one domain',
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
      minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
      defaultRootObject: 'index.html',
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: this.headers,
        functionAssociations: [{ function: spaFallback, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: Object.fromEntries(API_ROOT_PATHS.map((pattern) => [pattern, apiBehaviour])),
    });

    // Hashed file names: cached for a year. index.html: revalidated on every load, so a deploy shows at once.
    const assets = new BucketDeployment(this, 'Assets', {
      sources: [Source.asset(CONSOLE_DIST, { exclude: ['index.html', 'build.json'] })],
      destinationBucket: this.bucket,
      cacheControl: [CacheControl.fromString('public, max-age=31536000, immutable')],
      prune: false,
    });
    const index = new BucketDeployment(this, 'Index', {
      sources: [Source.asset(CONSOLE_DIST, { exclude: ['assets', 'assets/*', 'build.json'] })],
      destinationBucket: this.bucket,
      cacheControl: [CacheControl.fromString('no-cache')],
      prune: false,
      distribution: this.distribution,
      distributionPaths: ['/index.html'],
    });
    // New assets are in place before the index.html that names them.
    index.node.addDependency(assets);
    this.acknowledge();
  }

  /** cdk-nag findings this construct accepts, each with its reason. */
  private acknowledge() {
    const ack = (id: string, reason: string) => Validations.of(this).acknowledge({ id, reason });
    ack('AwsSolutions-S1', 'The bucket holds only the public build output of the console; CloudFront is the only reader.');
    ack('AwsSolutions-CFR1', 'The console is offered worldwide, as the API is.');
    ack('AwsSolutions-CFR2', 'No WAF: the API behind /api/* applies its own per-user and per-address rate limits in the request pipeline.');
    ack('AwsSolutions-CFR3', 'No CloudFront access logs: API requests are logged by the API stage; the static files carry no user data.');
    ack(
      'AwsSolutions-CFR4',
      'The default CloudFront certificate allows older TLS for the *.cloudfront.net name; a custom domain with its certificate sets TLSv1.2_2021.',
    );
  }
}

/**
 * Its own stack, beside the platform's (bin/app.ts): the file deployment runs as a CDK-provided
 * function, which the platform stack's one-function-per-group layout does not list.
 */
export class WebConsoleStack extends Stack {
  readonly console: WebConsole;

  constructor(scope: Construct, id: string, props: StackProps & { httpApi: IHttpApi; agentDomain?: string }) {
    super(scope, id, props);
    this.console = new WebConsole(this, 'WebConsole', { httpApi: props.httpApi, agentDomain: props.agentDomain });
    this.acknowledgeDeploymentFunction();
    new CfnOutput(this, 'ConsoleUrl', {
      value: `https://${this.console.distribution.distributionDomainName}`,
      description: 'The web console and the API (/api/*) on one domain: set appUrl to it (or to your domain in front of it)',
    });
  }

  /**
   * The file copy is aws-cdk-lib's BucketDeployment function (one per stack): its runtime, role and
   * policy are the library's, run only during deployments. Its findings are acknowledged on it alone.
   */
  private acknowledgeDeploymentFunction() {
    const fn = this.node.children.find((c) => c.node.id.startsWith('Custom::CDKBucketDeployment'));
    if (!fn) throw new Error('the BucketDeployment function was not found: aws-cdk-lib changed its layout');
    const part = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value);
    const stagingBucket = `cdk-${DefaultStackSynthesizer.DEFAULT_QUALIFIER}-assets-${part(this.account, 'AccountId')}-${part(this.region, 'Region')}`;
    const filesArn = `<${this.getLogicalId(this.console.bucket.node.defaultChild as CfnElement)}.Arn>/*`;
    const why = "aws-cdk-lib's BucketDeployment function, run only while deploying: it copies the build from the CDK staging bucket into the console's bucket";
    for (const id of [
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      ...['s3:GetObject*', 's3:GetBucket*', 's3:List*', 's3:DeleteObject*', 's3:Abort*'].map((a) => `AwsSolutions-IAM5[Action::${a}]`),
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${stagingBucket}/*]`,
      `AwsSolutions-IAM5[Resource::${filesArn}]`,
      'AwsSolutions-IAM5[Resource::*]',
      'AwsSolutions-L1',
      'Serverless-LambdaDLQ',
      'Serverless-LambdaLatestVersion',
      'Serverless-LambdaTracing',
    ])
      Validations.of(fn).acknowledge({ id, reason: why });
  }
}
