import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { AUTO_CHECKPOINT_KEEP_DAYS } from '#contract/autonomy';

/** Days an upload by URL may stay unconfirmed under `pending/` before the bucket removes it. */
export const PENDING_UPLOAD_DAYS = 1;

/** Days the bucket keeps an automatic checkpoint's snapshot under `checkpoints-auto/`: a day more than its record is offered, so no record outlives its snapshot. */
export const AUTO_CHECKPOINT_OBJECT_DAYS = AUTO_CHECKPOINT_KEEP_DAYS + 1;

/**
 * The file-manager skill's object storage (adapters/file-storage-s3.ts): private, encrypted,
 * TLS only. Uploads by presigned URL land under `pending/` and are moved out when confirmed; the
 * lifecycle removes the ones never confirmed, automatic checkpoints once they expired, and multipart uploads left incomplete.
 */
export class FileBucket extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      versioned: false,
      // Users' files: a stack deletion must not drop them.
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        { id: 'abandoned-uploads', prefix: 'pending/', expiration: Duration.days(PENDING_UPLOAD_DAYS) },
        { id: 'expired-auto-checkpoints', prefix: 'checkpoints-auto/', expiration: Duration.days(AUTO_CHECKPOINT_OBJECT_DAYS) },
        { id: 'incomplete-multipart', abortIncompleteMultipartUploadAfter: Duration.days(PENDING_UPLOAD_DAYS) },
      ],
    });
  }
}
