import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ZodFirstPartyTypeKind as zod3TypeNames } from 'zod/v3';
import { AI_DEFAULT_PROVIDER, CREDENTIALS_SHIM, LAMBDA_BUNDLE, REPLACED_CREDENTIAL_PROVIDER, ZOD_MINI, ZOD_V3, ZOD_WITHOUT_LOCALES } from '../../lib/bundling';
import { ZodFirstPartyTypeKind as standInTypeNames } from '../../shared/bundle-stubs/zod-v3-kinds';
import { WORKERS } from '../../lib/constructs/functions';
import { CDK_BUNDLING } from '../../lib/constructs/platform-function';
import { NEEDS, type Need } from '../../lib/permissions';
import { contract } from '../../shared/contract';

/**
 * The bundles as they deploy (lib/bundling.ts), built once: every function must load with the
 * credential shim, sign with the role's environment credentials, and use exactly the rights the
 * NEEDS table gives it.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** Each deployed function and the folder its bundle is built from. */
const deployed = [...contract.map((g) => ({ name: g.group, folder: g.group })), ...WORKERS.map((w) => ({ name: w.name, folder: w.folder ?? w.name }))];
const folders = [...new Set(deployed.map((f) => f.folder))];

let outdir: string;
let metafile: Metafile;
const bundleOf = (folder: string) => {
  const [file, output] = Object.entries(metafile.outputs).find(([f]) => f.endsWith(`/${folder}.mjs`))!;
  const inputs = Object.entries(output.inputs)
    .filter(([, i]) => i.bytesInOutput > 0)
    .map(([name]) => name);
  return { file: path.resolve(ROOT, file), text: readFileSync(path.resolve(ROOT, file), 'utf8'), inputs };
};

beforeAll(async () => {
  outdir = mkdtempSync(path.join(tmpdir(), 'platform-bundles-'));
  const result = await build({
    ...LAMBDA_BUNDLE,
    // Maps change nothing that is tested here.
    sourcemap: false,
    entryPoints: Object.fromEntries(folders.map((f) => [f, path.join(ROOT, 'functions', f, 'handler.ts')])),
    outdir,
    outExtension: { '.js': '.mjs' },
    absWorkingDir: ROOT,
    metafile: true,
    logLevel: 'silent',
  });
  metafile = result.metafile!;
}, 120_000);

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('bundling settings', () => {
  it('hands CDK the same settings the bench builds with, the credential alias included', () => {
    expect(existsSync(CREDENTIALS_SHIM)).toBe(true);
    expect(CDK_BUNDLING).toMatchObject({
      format: LAMBDA_BUNDLE.format,
      target: LAMBDA_BUNDLE.target,
      minify: true,
      sourceMap: true,
      sourcesContent: false,
      externalModules: [],
      mainFields: LAMBDA_BUNDLE.mainFields,
      banner: LAMBDA_BUNDLE.banner.js,
      esbuildArgs: {
        [`--alias:${REPLACED_CREDENTIAL_PROVIDER}`]: CREDENTIALS_SHIM,
        '--alias:zod': ZOD_WITHOUT_LOCALES,
        '--alias:zod/v4': ZOD_WITHOUT_LOCALES,
        '--alias:zod/mini': ZOD_MINI,
        '--alias:zod/v3': ZOD_V3,
        '--alias:@ai-sdk/gateway': AI_DEFAULT_PROVIDER,
      },
    });
    expect(existsSync(ZOD_WITHOUT_LOCALES) && existsSync(ZOD_V3) && existsSync(AI_DEFAULT_PROVIDER)).toBe(true);
  });

  it("leaves zod 3 and the AI SDK's default provider out of every bundle; the zod/v3 stand-in has zod 3's own type names", () => {
    expect({ ...standInTypeNames }).toEqual({ ...zod3TypeNames });
    for (const folder of folders) {
      const { inputs } = bundleOf(folder);
      expect(
        inputs.filter((i) => /node_modules\/(zod\/v3\/|@ai-sdk\/gateway\/|@vercel\/oidc\/)/.test(i)),
        folder,
      ).toEqual([]);
    }
  });

  it("keeps only zod's English locale in every bundle", () => {
    for (const folder of folders) {
      const { inputs } = bundleOf(folder);
      expect(
        inputs.filter((i) => /zod\/v4\/locales\/(?!(en|index)\.js$)/.test(i)),
        folder,
      ).toEqual([]);
    }
  });

  it('leaves the SDK default credential chain out of every bundle', () => {
    for (const folder of folders) {
      const { inputs } = bundleOf(folder);
      expect(
        inputs.filter((i) => /@aws-sdk\/credential-provider-(node|ini|sso|process|web-identity|http)\//.test(i)),
        folder,
      ).toEqual([]);
      expect(inputs.some((i) => i.endsWith('shared/aws/lambda-credentials.ts')) || !inputs.some((i) => i.includes('@aws-sdk/client-')), folder).toBe(true);
    }
  });
});

describe('zod in a bundle', () => {
  it('validates and words its errors exactly as the full zod does', async () => {
    const probe = `
      import { z } from 'zod/v4';
      import zod, { z as fromRoot } from 'zod';
      export const schema = z.object({ name: z.string().min(2), email: z.email(), tags: z.array(z.enum(['a', 'b'])) }).strict();
      export const sameZ = zod === fromRoot && fromRoot.object === z.object;
      export const locales = Object.keys(z.locales);`;
    const file = path.join(outdir, 'zod-probe.mjs');
    await build({
      ...LAMBDA_BUNDLE,
      sourcemap: false,
      stdin: { contents: probe, resolveDir: ROOT, loader: 'ts' },
      outfile: file,
      absWorkingDir: ROOT,
      logLevel: 'silent',
    });
    const bundled = await import(file);
    const full = z.object({ name: z.string().min(2), email: z.email(), tags: z.array(z.enum(['a', 'b'])) }).strict();
    const input = { name: 'x', email: 'nope', tags: ['c'], extra: 1 };
    expect(bundled.schema.safeParse(input).error.issues).toEqual(full.safeParse(input).error!.issues);
    expect(bundled.schema.parse({ name: 'xy', email: 'a@example.com', tags: ['a'] })).toEqual({ name: 'xy', email: 'a@example.com', tags: ['a'] });
    expect(bundled.sameZ).toBe(true);
    expect(bundled.locales).toEqual(['en']);
  });
});

describe('a bundled function in a fresh process', () => {
  let server: ReturnType<typeof createServer>;
  const seen: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    // Answers every DynamoDB call with an error, after recording how it was signed.
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => {
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', message: 'loopback' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('loads, and signs its first call with the Lambda environment credentials', async () => {
    const { port } = server.address() as AddressInfo;
    const script = `
      const { handler } = await import(${JSON.stringify(bundleOf('provisioner').file)});
      const body = JSON.stringify({ kind: 'agent', userId: 'u1', agentId: 'a1', ownerEmail: 'o@example.com' });
      const out = await handler({ Records: [{ messageId: 'm1', body, attributes: { ApproximateReceiveCount: '1' } }] });
      process.stdout.write(JSON.stringify(out));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      env: {
        PATH: process.env.PATH,
        AWS_ACCESS_KEY_ID: 'AKIALAMBDAROLEKEY',
        AWS_SECRET_ACCESS_KEY: 'lambda-role-secret',
        AWS_SESSION_TOKEN: 'lambda-role-session',
        AWS_REGION: 'us-east-1',
        AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${port}`,
        STAGE: 'aws',
        TABLE_NAME: 'platform',
        LOG_LEVEL: 'SILENT',
      },
      timeout: 60_000,
    });
    // The table refused the call, so the record is reported for redelivery; what matters is the signature.
    expect(JSON.parse(stdout)).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]!.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIALAMBDAROLEKEY\/\d{8}\/us-east-1\/dynamodb\/aws4_request,/);
    expect(seen[0]!['x-amz-security-token']).toBe('lambda-role-session');
  });
});

describe('the NEEDS table against the code', () => {
  /** What a bundle shows it does, by the modules and messages that survive tree shaking. */
  const evidence: Record<Need, (b: ReturnType<typeof bundleOf>) => boolean> = {
    sendEvents: (b) => b.inputs.some((i) => i.endsWith('shared/events/emit.ts')),
    sendProvisioning: (b) => b.text.includes('PROVISIONING_QUEUE_URL is not set'),
    dataKey: (b) => b.inputs.some((i) => i.endsWith('shared/crypto/envelope.ts')),
    sendEmail: (b) => b.inputs.some((i) => i.endsWith('shared/adapters/email.ts')),
    describeTable: (b) => b.text.includes('"DescribeTable"'),
    launchTasks: (b) => b.inputs.some((i) => i.endsWith('shared/adapters/launcher-ecs.ts')),
    stopTasks: (b) => b.inputs.some((i) => i.endsWith('shared/adapters/launcher-ecs.ts')),
    reachInstances: (b) => b.text.includes('instance unreachable'),
    fileBucket: (b) => b.inputs.some((i) => i.endsWith('shared/adapters/file-storage-s3.ts')),
    readRuntimeLogs: (b) => b.inputs.some((i) => i.endsWith('shared/adapters/runtime-logs-cloudwatch.ts')),
  };
  const needsInCode = (folder: string) => {
    const b = bundleOf(folder);
    return (Object.keys(evidence) as Need[]).filter((need) => evidence[need](b)).sort();
  };

  it('grants each function exactly what its bundle calls (a handler sharing a bundle may need less)', () => {
    if (process.env.PRINT_NEEDS)
      for (const { name, folder } of deployed) console.log('NEEDS', name, JSON.stringify(needsInCode(folder)), JSON.stringify([...(NEEDS[name] ?? [])].sort()));
    for (const { name, folder } of deployed) {
      const granted = [...(NEEDS[name] ?? [])].sort();
      const shared = deployed.filter((d) => d.folder === folder).length > 1;
      if (shared) expect(needsInCode(folder), `${name}: grant a subset of its bundle's needs`).toEqual(expect.arrayContaining(granted));
      else expect(granted, `${name}: update NEEDS in lib/permissions.ts to what functions/${folder} calls`).toEqual(needsInCode(folder));
    }
  });
});
