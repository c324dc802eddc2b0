import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod, HttpRoute, HttpRouteKey, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { RouteGroup } from '#contract';

/**
 * Stage-wide ceiling, a circuit breaker for the account rather than a per-user limit: per-user and
 * per-IP limits are the DynamoDB counters of the request pipeline (docs/architecture.md §4).
 */
export const STAGE_THROTTLE = { rateLimit: 1000, burstLimit: 2000 };

/** The HTTP API: one route per contract entry, each integrated with its group's function. */
export class Api extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.httpApi = new HttpApi(this, 'HttpApi', {
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

  /** Declares every route of the contract; no catch-all, so unknown paths never reach a function. */
  addContractRoutes(contract: readonly RouteGroup[], functionOf: (group: string) => IFunction) {
    for (const group of contract) {
      // One integration and one invoke permission per function: a permission per route would put
      // over a hundred extra resources in the stack and swell the functions' resource policies.
      const integration = new HttpLambdaIntegration(`${group.group}-lambda`, functionOf(group.group), {
        scopePermissionToRoute: false,
      });
      for (const route of group.routes) {
        new HttpRoute(this, route.operation, {
          httpApi: this.httpApi,
          routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
          integration,
        });
      }
    }
  }
}
