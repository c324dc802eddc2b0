import { CfnOutput } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/**
 * The platform's secrets: the JWT key, generated in the account, and the operator's credentials
 * (card, OAuth, webhooks, bot check, model API...), which the operator writes into one JSON secret.
 * None is ever in git, cdk.json, the template or cdk.out.
 */
export class Secrets extends Construct {
  readonly jwtSecret: Secret;
  /** JSON object NAME → value, `{}` at creation; lib/settings.ts says which names it may hold. */
  readonly operatorSecret: Secret;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.jwtSecret = new Secret(this, 'JwtSecret', {
      description: 'Agent platform: HMAC key that signs session JWTs',
      // 64 alphanumerics carry about 380 bits; no punctuation so the value survives any quoting.
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    // CloudFormation writes "{}" once, at creation; later deploys leave the operator's values alone
    // as long as this initial value is unchanged in the template.
    this.operatorSecret = new Secret(this, 'OperatorSettings', {
      description: 'Agent platform: operator credentials as JSON {"NAME": "value"}; list the names in the CDK context secretSettings',
      secretObjectValue: {},
    });
    new CfnOutput(scope, 'OperatorSecretArn', {
      value: this.operatorSecret.secretArn,
      description: 'Put credentials here as JSON (aws secretsmanager put-secret-value), then deploy with -c secretSettings=NAME,...',
    });
  }

  /**
   * The JWT secret as a CloudFormation dynamic reference (`{{resolve:secretsmanager:...}}`).
   * CloudFormation resolves it at deploy time, so the value never appears in the template, the
   * synth output or cdk.out; that is why unwrapping the SecretValue token is safe here. The
   * functions then need no secretsmanager permission at run time.
   */
  jwtSecretReference(): string {
    return this.jwtSecret.secretValue.unsafeUnwrap();
  }

  /** One key of the operator secret as a dynamic reference, safe for the same reason. */
  operatorReference(name: string): string {
    return this.operatorSecret.secretValueFromJson(name).unsafeUnwrap();
  }
}
