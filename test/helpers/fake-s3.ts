import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import { crc32 } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * A loopback S3 speaking the REST wire format the SDK uses with a path-style endpoint:
 * PutObject (plain, CopyObject by `x-amz-copy-source`, and presigned PUTs), GetObject, HeadObject,
 * DeleteObject and ListObjectsV2. A presigned PUT or GET is checked as S3 does: its SigV4 query signature
 * recomputed over the signed headers (so another size or type is refused), and its expiry.
 */
export interface FakeS3 {
  endpoint: string;
  bucket: string;
  objects: Map<string, { body: Buffer; contentType: string }>;
  requests: { method: string; path: string; query: string }[];
  close(): Promise<void>;
}

const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
const xml = (res: http.ServerResponse, status: number, body: string) => {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`);
};
const error = (res: http.ServerResponse, status: number, code: string, message: string) =>
  xml(res, status, `<Error><Code>${code}</Code><Message>${message}</Message></Error>`);
function crc32Base64(body: Buffer): string {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32(body));
  return out.toString('base64');
}
const escapeXml = (s: string) => s.replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`);

async function presignedSignatureValid(req: http.IncomingMessage, url: URL, region: string): Promise<'ok' | 'expired' | 'mismatch'> {
  const q = url.searchParams;
  const amzDate = q.get('X-Amz-Date') ?? '';
  const signingDate = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  const expiresIn = Number(q.get('X-Amz-Expires'));
  if (Number.isNaN(signingDate.getTime()) || !Number.isFinite(expiresIn)) return 'mismatch';
  if (Date.now() > signingDate.getTime() + expiresIn * 1000) return 'expired';
  const signed = (q.get('X-Amz-SignedHeaders') ?? '').split(';');
  const headers: Record<string, string> = {};
  for (const name of signed) headers[name] = String(req.headers[name] ?? '');
  // The presigner's own query parameters are added again by presign(); a hoisted header goes back to being one.
  const query: Record<string, string> = {};
  const own = new Set(['X-Amz-Signature', 'X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders']);
  for (const [k, v] of q) if (!own.has(k)) query[k] = v;
  headers['X-Amz-Content-Sha256'] = query['X-Amz-Content-Sha256'] ?? 'UNSIGNED-PAYLOAD';
  delete query['X-Amz-Content-Sha256'];
  const signer = new SignatureV4({ service: 's3', region, credentials: CREDENTIALS, sha256: Sha256, uriEscapePath: false, applyChecksum: false });
  const again = await signer.presign(
    { method: req.method!, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query, headers },
    { signingDate, expiresIn, signableHeaders: new Set(signed) },
  );
  return again.query?.['X-Amz-Signature'] === q.get('X-Amz-Signature') ? 'ok' : 'mismatch';
}

export class Sha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash =
      secret === undefined
        ? createHash('sha256')
        : (createHmac('sha256', typeof secret === 'string' ? secret : Buffer.from(secret as ArrayBuffer)) as unknown as ReturnType<typeof createHash>);
  }
  update(data: string | ArrayBuffer | ArrayBufferView) {
    this.hash.update(typeof data === 'string' ? data : Buffer.from(data as ArrayBuffer));
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}

export async function startFakeS3(opts: { bucket?: string; region?: string } = {}): Promise<FakeS3> {
  const bucket = opts.bucket ?? 'fake-files';
  const region = opts.region ?? 'us-east-1';
  const objects = new Map<string, { body: Buffer; contentType: string }>();
  const requests: FakeS3['requests'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
      requests.push({ method: req.method!, path: url.pathname, query: url.search });
      const [, bucketName, ...rest] = url.pathname.split('/');
      const key = rest.map(decodeURIComponent).join('/');
      if (bucketName !== bucket) return error(res, 404, 'NoSuchBucket', 'The specified bucket does not exist');
      const body = Buffer.concat(chunks);
      if (req.method === 'GET' && !key && url.searchParams.get('list-type') === '2') {
        const prefix = url.searchParams.get('prefix') ?? '';
        const keys = [...objects.keys()].filter((k) => k.startsWith(prefix)).sort();
        return xml(
          res,
          200,
          `<ListBucketResult><Name>${bucket}</Name><Prefix>${escapeXml(prefix)}</Prefix><KeyCount>${keys.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${keys
            .map((k) => `<Contents><Key>${escapeXml(k)}</Key><Size>${objects.get(k)!.body.length}</Size></Contents>`)
            .join('')}</ListBucketResult>`,
        );
      }
      if (!key) return error(res, 400, 'InvalidRequest', 'no key');
      // A presigned URL is checked by its query signature and expiry; anything else must carry SigV4 credentials.
      if (req.method !== 'DELETE') {
        const verdict = url.searchParams.has('X-Amz-Signature')
          ? await presignedSignatureValid(req, url, region)
          : /^AWS4-HMAC-SHA256 Credential=/.test(String(req.headers.authorization))
            ? 'ok'
            : 'unsigned';
        if (verdict === 'expired') return error(res, 403, 'AccessDenied', 'Request has expired');
        if (verdict === 'unsigned') return error(res, 403, 'AccessDenied', 'Access Denied');
        if (verdict === 'mismatch')
          return error(res, 403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
      }
      if (req.method === 'PUT') {
        // S3 checks a CRC32 the request names (header or presigned query) against the body it receives.
        const crc = req.headers['x-amz-checksum-crc32'] ?? url.searchParams.get('x-amz-checksum-crc32');
        if (crc && crc !== crc32Base64(body)) return error(res, 400, 'BadDigest', 'The CRC32 you specified did not match the calculated checksum.');
        const source = req.headers['x-amz-copy-source'];
        if (source) {
          const from = decodeURIComponent(String(source).replace(/^\//, '')).split('/').slice(1).join('/');
          const found = objects.get(from);
          if (!found) return error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
          objects.set(key, { ...found });
          return xml(
            res,
            200,
            `<CopyObjectResult><ETag>"${createHash('md5').update(found.body).digest('hex')}"</ETag><LastModified>${new Date().toISOString()}</LastModified></CopyObjectResult>`,
          );
        }
        objects.set(key, { body, contentType: String(req.headers['content-type'] ?? 'application/octet-stream') });
        res.writeHead(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` });
        return res.end();
      }
      const found = objects.get(key);
      if (req.method === 'GET' || req.method === 'HEAD') {
        if (!found) {
          if (req.method === 'HEAD') {
            res.writeHead(404);
            return res.end();
          }
          return error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
        }
        res.writeHead(200, { 'content-type': url.searchParams.get('response-content-type') ?? found.contentType, 'content-length': String(found.body.length) });
        return res.end(req.method === 'GET' ? found.body : undefined);
      }
      if (req.method === 'DELETE') {
        objects.delete(key);
        res.writeHead(204);
        return res.end();
      }
      return error(res, 405, 'MethodNotAllowed', 'method not allowed');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    objects,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
