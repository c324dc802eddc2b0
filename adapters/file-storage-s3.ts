import { lazyClient } from '#platform/lazy/aws-client';
import { config, filesConfig } from '#platform/config';
import type { FileStorage } from './file-storage';

/** S3 in AWS; FILES_S3_ENDPOINT points it at another S3-compatible store (path-style), as the tests' loopback fake. Loaded on the first file call. */
const s3Client = /* @__PURE__ */ lazyClient(
  () => import('#platform/lazy/aws-s3'),
  (sdk) => {
    const endpoint = filesConfig().s3Endpoint;
    return new sdk.S3Client({
      region: config().region,
      maxAttempts: 3,
      // Otherwise a presigned PUT carries the CRC32 of the empty body it was signed with, and S3 refuses every upload.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      ...(endpoint ? { endpoint, forcePathStyle: true, credentials: config().localCredentials ?? { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    });
  },
);

export function resetS3Client(): void {
  s3Client.reset();
}

const bucket = () => {
  const name = filesConfig().bucket;
  if (!name) throw new Error('FILES_BUCKET is not set');
  return name;
};

/** By name, not `instanceof`: the error classes would bring the S3 client back into the module's static imports. */
const MISSING_NAMES = new Set(['NoSuchKey', 'NotFound']);
const missing = (err: unknown) =>
  MISSING_NAMES.has((err as { name?: string }).name ?? '') || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404;

export const s3Storage: FileStorage = {
  async put(objectKey, bytes, contentType) {
    const { client: s3, sdk } = await s3Client.get();
    await s3.send(new sdk.PutObjectCommand({ Bucket: bucket(), Key: objectKey, Body: bytes, ContentType: contentType, ContentLength: bytes.length }));
  },
  async get(objectKey) {
    const { client: s3, sdk } = await s3Client.get();
    try {
      const out = await s3.send(new sdk.GetObjectCommand({ Bucket: bucket(), Key: objectKey }));
      return out.Body ? Buffer.from(await out.Body.transformToByteArray()) : Buffer.alloc(0);
    } catch (err) {
      if (missing(err)) return undefined;
      throw err;
    }
  },
  async delete(objectKey) {
    const { client: s3, sdk } = await s3Client.get();
    await s3.send(new sdk.DeleteObjectCommand({ Bucket: bucket(), Key: objectKey }));
  },
  async size(objectKey) {
    const { client: s3, sdk } = await s3Client.get();
    try {
      return (await s3.send(new sdk.HeadObjectCommand({ Bucket: bucket(), Key: objectKey }))).ContentLength ?? 0;
    } catch (err) {
      if (missing(err)) return undefined;
      throw err;
    }
  },
  async move(from, to) {
    const { client: s3, sdk } = await s3Client.get();
    await s3.send(new sdk.CopyObjectCommand({ Bucket: bucket(), Key: to, CopySource: `${bucket()}/${from.split('/').map(encodeURIComponent).join('/')}` }));
    await s3.send(new sdk.DeleteObjectCommand({ Bucket: bucket(), Key: from }));
  },
  async list(prefix) {
    const { client: s3, sdk } = await s3Client.get();
    const found: string[] = [];
    let token: string | undefined;
    do {
      const out = await s3.send(new sdk.ListObjectsV2Command({ Bucket: bucket(), Prefix: prefix, ContinuationToken: token }));
      for (const o of out.Contents ?? []) if (o.Key) found.push(o.Key);
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return found;
  },
  async uploadTarget(objectKey, { size, contentType, now }) {
    const { client: s3, sdk } = await s3Client.get();
    const expiresIn = filesConfig().uploadUrlTtlSeconds;
    // Content-Type and Content-Length are signed: S3 refuses a PUT of any other size or type.
    const url = await sdk.getSignedUrl(s3, new sdk.PutObjectCommand({ Bucket: bucket(), Key: objectKey, ContentType: contentType, ContentLength: size }), {
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
    const { client: s3, sdk } = await s3Client.get();
    const expiresIn = filesConfig().downloadUrlTtlSeconds;
    const url = await sdk.getSignedUrl(s3, new sdk.GetObjectCommand({ Bucket: bucket(), Key: objectKey, ResponseContentType: contentType }), {
      expiresIn,
      signingDate: now,
    });
    return { url, expiresAt: new Date(now.getTime() + expiresIn * 1000).toISOString() };
  },
};
