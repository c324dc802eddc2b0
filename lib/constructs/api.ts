import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { Stack } from 'aws-cdk-lib';
import { CfnRoute, HttpApi, HttpIntegration, HttpIntegrationType, HttpStage, LogGroupLogDestination, PayloadFormatVersion } from 'aws-cdk-lib/aws-apigatewayv2';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { routeKey, type RouteGroup } from '#contract';
import { stagedName } from '../stage';

/**
 * Stage-wide ceiling, a circuit breaker for the account rather than a per-user limit: per-user and
 * per-IP limits are the DynamoDB counters of the request pipeline (docs/architecture.md §4).
 */
export const STAGE_THROTTLE = { rateLimit: 1000, burstLimit: 2000 };

/** The HTTP API: one route per contract entry, each integrated with its group's function. */
export class Api extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;

  constructor(scope: Construct, id: string, props: { stage?: string } = {}) {
    super(scope, id);
    this.httpApi = new HttpApi(this, 'HttpApi', {
      // The construct id without a stage, as the API was always named; a stage's API says whose it is.
      ...(props.stage && { apiName: stagedName(props.stage, 'HttpApi') }),
      description: 'Agent platform API',
      // Created below, so it can carry throttling and access logs.
      createDefaultStage: false,
    });
    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: RetentionDays.ONE_MONTH });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: STAGE_THROTTLE,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        // Request metadata only: no headers, so no cookies or tokens end up in the logs.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            time: '$context.requestTime',
            ip: '$context.identity.sourceIp',
            routeKey: '$context.routeKey',
            status: '$context.status',
            latencyMs: '$context.responseLatency',
            integrationError: '$context.integrationErrorMessage',
          }),
        ),
      },
    });
  }

  /** The base URL clients call (ends with a slash). */
  get url(): string {
    return this.stage.url;
  }

  /**
   * Declares every route of the contract; no catch-all, so unknown paths never reach a function.
   * The routes stay in this stack under the ids they always had: API Gateway refuses a second route
   * with the same key, so a route moved to another stack could not be created before the old one
   * is deleted. Each group's integration and invoke permission live in `integrationHome` (the
   * functions' nested stack), beside the function they call.
   */
  addContractRoutes(contract: readonly RouteGroup[], functionOf: (group: string) => IFunction, integrationHome: Construct) {
    const stack = Stack.of(this);
    for (const group of contract) {
      const fn = functionOf(group.group);
      const integration = new HttpIntegration(integrationHome, `${group.group}-lambda`, {
        httpApi: this.httpApi,
        integrationType: HttpIntegrationType.AWS_PROXY,
        integrationUri: fn.functionArn,
        payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
      });
      // One invoke permission per function, for every route of the API: a permission per route
      // would put over a hundred extra resources in the stacks and swell the functions' resource policies.
      fn.addPermission(`${group.group}-api-invoke`, {
        principal: new ServicePrincipal('apigateway.amazonaws.com'),
        sourceArn: stack.formatArn({ service: 'execute-api', resource: this.httpApi.apiId, resourceName: '*/*/*' }),
        scope: integrationHome,
      });
      for (const route of group.routes) {
        // `<operation>/Resource`: the construct path, hence the logical id, of the routes as first deployed.
        new CfnRoute(new Construct(this, route.operation), 'Resource', {
          apiId: this.httpApi.apiId,
          routeKey: routeKey(route),
          authorizationType: 'NONE',
          target: `integrations/${integration.integrationId}`,
        });
      }
    }
  }
}
