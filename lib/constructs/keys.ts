import { RemovalPolicy } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/** The KMS key behind the envelope encryption of wallet private keys and agent gateway tokens. */
export class Keys extends Construct {
  readonly dataKey: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.dataKey = new Key(this, 'DataKey', {
      description: 'Agent platform: envelope encryption of wallet keys and agent gateway tokens',
      enableKeyRotation: true,
      // Deleting the key would make every stored wallet and token unreadable for good.
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
