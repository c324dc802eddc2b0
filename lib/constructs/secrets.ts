import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/** Platform secrets generated in the account, never written by an operator or kept in git. */
export class Secrets extends Construct {
  readonly jwtSecret: Secret;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.jwtSecret = new Secret(this, 'JwtSecret', {
      description: 'Agent platform: HMAC key that signs session JWTs',
      // 64 alphanumerics carry about 380 bits; no punctuation so the value survives any quoting.
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
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
}
