/** The parts of the S3 client the file storage uses, loaded on its first call (adapters/file-storage-s3.ts; see aws-kms.ts for why). */
export {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
export { getSignedUrl } from '@aws-sdk/s3-request-presigner';
