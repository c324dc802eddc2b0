import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { config } from '../config';
import type { FileStorage } from './file-storage';

let client: S3Client | undefined;

/** S3 in AWS; FILES_S3_ENDPOINT points it at another S3-compatible store (path-style), as the tests' loopback fake. */
function s3(): S3Client {
  const endpoint = config().files.s3Endpoint;
  client ??= new S3Client({
    region: config().region,
    maxAttempts: 3,
    // Otherwise a presigned PUT carries the CRC32 of the empty body it was signed with, and S3 refuses every upload.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    ...(endpoint ? { endpoint, forcePathStyle: true, credentials: config().localCredentials ?? { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
  return client;
}

export function resetS3Client(): void {
  client?.destroy();
  client = undefined;
}

const bucket = () => {
  const name = config().files.bucket;
  if (!name) throw new Error('FILES_BUCKET is not set');
  return name;
};

const missing = (err: unknown) =>
  err instanceof NoSuchKey || err instanceof NotFound || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404;

export const s3Storage: FileStorage = {
  async put(objectKey, bytes, contentType) {
    await s3().send(new PutObjectCommand({ Bucket: bucket(), Key: objectKey, Body: bytes, ContentType: contentType, ContentLength: bytes.length }));
  },
  async get(objectKey) {
    try {
      const out = await s3().send(new GetObjectCommand({ Bucket: bucket(), Key: objectKey }));
      return out.Body ? Buffer.from(await out.Body.transformToByteArray()) : Buffer.alloc(0);
    } catch (err) {
      if (missing(err)) return undefined;
      throw err;
    }
  },
  async delete(objectKey) {
    await s3().send(new DeleteObjectCommand({ Bucket: bucket(), Key: objectKey }));
  },
  async size(objectKey) {
    try {
      return (await s3().send(new HeadObjectCommand({ Bucket: bucket(), Key: objectKey }))).ContentLength ?? 0;
    } catch (err) {
      if (missing(err)) return undefined;
      throw err;
    }
  },
  async move(from, to) {
    await s3().send(new CopyObjectCommand({ Bucket: bucket(), Key: to, CopySource: `${bucket()}/${from.split('/').map(encodeURIComponent).join('/')}` }));
    await s3().send(new DeleteObjectCommand({ Bucket: bucket(), Key: from }));
  },
  async list(prefix) {
    const found: string[] = [];
    let token: string | undefined;
    do {
      const out = await s3().send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: prefix, ContinuationToken: token }));
      for (const o of out.Contents ?? []) if (o.Key) found.push(o.Key);
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return found;
  },
  async uploadTarget(objectKey, { size, contentType, now }) {
    const expiresIn = config().files.uploadUrlTtlSeconds;
    // Content-Type and Content-Length are signed: S3 refuses a PUT of any other size or type.
    const url = await getSignedUrl(s3(), new PutObjectCommand({ Bucket: bucket(), Key: objectKey, ContentType: contentType, ContentLength: size }), {
      expiresIn,
      signingDate: now,
      signableHeaders: new Set(['content-type', 'content-length']),
    });
    return {
      url,
      method: 'PUT',
      headers: { 'content-type': contentType, 'content-length': String(size) },
      expiresAt: new Date(now.getTime() + expiresIn * 1000).toISOString(),
    };
  },
  async downloadUrl(objectKey, { contentType, now }) {
    const expiresIn = config().files.downloadUrlTtlSeconds;
    const url = await getSignedUrl(s3(), new GetObjectCommand({ Bucket: bucket(), Key: objectKey, ResponseContentType: contentType }), {
      expiresIn,
      signingDate: now,
    });
    return { url, expiresAt: new Date(now.getTime() + expiresIn * 1000).toISOString() };
  },
};
