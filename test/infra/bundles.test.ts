import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ZodFirstPartyTypeKind as zod3TypeNames } from 'zod/v3';
import { ESM_REQUIRE_BANNER, initLoadedOutputs, LAMBDA_BUNDLE, lambdaBuildOptions, reachableOutputs } from '#build/bundling';
import { AI_SDK_ZOD_MEMBERS_NAMESPACE, AI_SDK_ZOD_NAMESPACE, aiSdkZodCopy, zodMembersModule, zodMembersUsedBy } from '#build/plugins/ai-sdk-zod-copy';
import { withoutContractDocs } from '#build/plugins/contract-without-docs';
import { barrelOwnStatements, cutBarrel, namesTakenFrom, SDK_BARREL_OWN_NAMESPACE, sdkBarrelsPerImporter } from '#build/plugins/sdk-barrels-per-importer';
import { settingsForTheFunctions } from '#build/plugins/settings-for-the-functions';
import { AI_DEFAULT_PROVIDER, CREDENTIALS_SHIM, REPLACED_CREDENTIAL_PROVIDER, ZOD_MINI, ZOD_V3, ZOD_WITHOUT_LOCALES } from '#build/substitutes';
import { bundleFunctions } from '#build/bundle-functions';
import { ZodFirstPartyTypeKind as standInTypeNames } from '#build/stubs/zod-v3-kinds';
import { WORKERS } from '#lib/constructs/functions';
import { FunctionBundles } from '#lib/constructs/function-bundles';
import { functionEntry, PlatformFunction } from '#lib/constructs/platform-function';
import { NEEDS, type Need } from '#lib/permissions';
import { config } from '#platform/config';
import { contract } from '#contract';
import { openApiDocument } from '#contract/document';
import { API_VERSION } from '#contract/version';
import { startFakeModelServer } from '../helpers/fake-model-server';
import { handlerPath } from '#contract/functions';

/**
 * The bundles as they deploy (build/bundling.ts: split into an entry and lazy chunks), built once:
 * every function must load with the credential shim, sign with the role's environment credentials,
 * and use exactly the rights the NEEDS table gives it. A function is its entry plus every chunk it
 * can reach (statically or through `import()`); its cold start loads only the static part.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** Each deployed function and the folder its bundle is built from. */
const deployed = [...contract.map((g) => ({ name: g.group, folder: g.group })), ...WORKERS.map((w) => ({ name: w.name, folder: w.folder ?? w.name }))];
const folders = [...new Set(deployed.map((f) => f.folder))];

let outdir: string;
const metafiles = new Map<string, Metafile>();
/** Inputs that left code in these outputs. */
const inputsOf = (metafile: Metafile, outputs: string[]) =>
  outputs.flatMap((o) =>
    Object.entries(metafile.outputs[o]!.inputs)
      .filter(([, i]) => i.bytesInOutput > 0)
      .map(([name]) => name),
  );
const bundleOf = (folder: string) => {
  const metafile = metafiles.get(folder)!;
  const entry = Object.keys(metafile.outputs).find((f) => f.endsWith(`/${folder}/index.mjs`))!;
  // Its entry and every chunk it can load, at init or by import(): the code that can run.
  const all = reachableOutputs(metafile, entry);
  const init = initLoadedOutputs(metafile, entry);
  return {
    file: path.resolve(ROOT, entry),
    text: all.map((o) => readFileSync(path.resolve(ROOT, o), 'utf8')).join('\n'),
    inputs: inputsOf(metafile, all),
    initInputs: inputsOf(metafile, init),
    lazyOutputs: all.filter((o) => !init.includes(o)),
  };
};

/** Loads a module in a fresh node process (as Lambda does) and prints what `expression` gives. */
const evaluate = async (file: string, expression: string) => {
  const script = `const m = await import(${JSON.stringify(file)}); process.stdout.write(JSON.stringify(await (${expression})));`;
  const env = {
    PATH: process.env.PATH,
    LOG_LEVEL: 'SILENT',
    STAGE: 'test',
    AWS_REGION: 'us-east-1',
    JWT_SECRET: 'bundle-test-secret-at-least-32-bytes-long-0123',
  };
  // The served OpenAPI document is past execFile's 1 MiB default.
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as unknown;
};

beforeAll(async () => {
  outdir = mkdtempSync(path.join(tmpdir(), 'platform-bundles-'));
  // As CDK builds them (build/bundle-functions.ts): one build per function, all in this process.
  const builds = folders.map((folder) => ({ entry: path.join(ROOT, handlerPath(folder)), outdir: path.join(outdir, folder) }));
  // Maps change nothing that is tested here.
  const results = await bundleFunctions(builds, { sourcemap: false, absWorkingDir: ROOT, metafile: true, logLevel: 'silent' });
  for (const [i, folder] of folders.entries()) metafiles.set(folder, results[i]!.metafile);
}, 300_000);

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('bundling settings', () => {
  it('builds each function as index.mjs plus chunks, with every alias and the require banner', () => {
    const options = lambdaBuildOptions('/src/functions/x/handler.ts', '/out');
    expect(options).toMatchObject({
      format: 'esm',
      splitting: true,
      entryPoints: { index: '/src/functions/x/handler.ts' },
      outdir: '/out',
      outExtension: { '.js': '.mjs' },
      chunkNames: 'chunks/[name]-[hash]',
      minify: true,
      sourcemap: true,
      sourcesContent: false,
      external: [],
      banner: { js: ESM_REQUIRE_BANNER },
      plugins: [
        aiSdkZodCopy,
        sdkBarrelsPerImporter,
        expect.objectContaining({ name: 'lazy-entries-share-the-init' }),
        expect.objectContaining({ name: 'contract-without-docs' }),
        settingsForTheFunctions,
        expect.objectContaining({ name: 'drop-unreachable-chunks' }),
      ],
      alias: {
        [REPLACED_CREDENTIAL_PROVIDER]: CREDENTIALS_SHIM,
        zod: ZOD_WITHOUT_LOCALES,
        'zod/v4': ZOD_WITHOUT_LOCALES,
        'zod/mini': ZOD_MINI,
        'zod/v3': ZOD_V3,
        '@ai-sdk/gateway': AI_DEFAULT_PROVIDER,
      },
    });
    expect(existsSync(CREDENTIALS_SHIM) && existsSync(ZOD_WITHOUT_LOCALES) && existsSync(ZOD_MINI)).toBe(true);
    expect(existsSync(ZOD_V3) && existsSync(AI_DEFAULT_PROVIDER)).toBe(true);
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
      expect(inputs.some((i) => i.endsWith('platform/aws/lambda-credentials.ts')) || !inputs.some((i) => i.includes('@aws-sdk/client-')), folder).toBe(true);
    }
  });
});

describe('code splitting', () => {
  it('leaves a library only imported through import() out of the cold start: SES in accounts', () => {
    const accounts = bundleOf('accounts');
    const ses = (i: string) => i.endsWith('adapters/email-ses.ts') || i.includes('node_modules/@aws-sdk/client-sesv2/');
    // Shipped (password reset mails go through SES in AWS), in a chunk the cold start does not load.
    expect(accounts.inputs.filter(ses).length).toBeGreaterThan(1);
    expect(accounts.initInputs.filter(ses)).toEqual([]);
    expect(accounts.initInputs.some((i) => i.endsWith('adapters/email.ts'))).toBe(true);
    expect(accounts.lazyOutputs.length).toBeGreaterThan(0);
  });

  it('gives every chunk its own require, so a lazy chunk can require a Node built-in', async () => {
    const dir = mkdtempSync(path.join(outdir, 'require-probe-'));
    writeFileSync(path.join(dir, 'handler.mjs'), "export const handler = async () => (await import('./lazy.cjs')).default.platform();");
    writeFileSync(path.join(dir, 'lazy.cjs'), "module.exports = { platform: () => require('node:os').platform() };");
    const result = await build({ ...lambdaBuildOptions(path.join(dir, 'handler.mjs'), path.join(dir, 'out')), metafile: true, logLevel: 'silent' });
    const outputs = Object.keys(result.metafile.outputs).filter((o) => o.endsWith('.mjs'));
    const entry = outputs.find((o) => o.endsWith('/out/index.mjs'))!;
    const [lazyChunk, ...others] = outputs.filter((o) => !initLoadedOutputs(result.metafile, entry).includes(o));
    expect(others).toEqual([]);
    expect(lazyChunk).toMatch(/\/out\/chunks\/lazy-[A-Z0-9]+\.mjs$/);
    expect(readFileSync(lazyChunk!, 'utf8').startsWith(ESM_REQUIRE_BANNER)).toBe(true);
    expect(existsSync(`${lazyChunk}.map`)).toBe(true);
    expect(await evaluate(path.resolve(entry), 'm.handler()')).toBe(process.platform);
  });

  it('deploys no chunk that nothing can load: an import() that tree shaking removed leaves no file (ws in gateway)', () => {
    for (const folder of folders) {
      const metafile = metafiles.get(folder)!;
      const entry = Object.keys(metafile.outputs).find((f) => f.endsWith(`/${folder}/index.mjs`))!;
      const reachable = new Set(reachableOutputs(metafile, entry));
      const written = readdirSync(path.join(outdir, folder, 'chunks')).map((c) =>
        path
          .relative(ROOT, path.join(outdir, folder, 'chunks', c))
          .split(path.sep)
          .join('/'),
      );
      expect(
        Object.keys(metafile.outputs).filter((o) => o.endsWith('.mjs') && !reachable.has(o)),
        folder,
      ).toEqual([]);
      expect(
        written.filter((file) => !metafile.outputs[file]),
        folder,
      ).toEqual([]);
    }
    // viem's index reaches its websocket transport's import('isows'), a call no function keeps.
    expect(bundleOf('gateway').inputs.filter((i) => /node_modules\/(ws|isows)\//.test(i))).toEqual([]);
    expect(Object.keys(metafiles.get('gateway')!.inputs).some((i) => /node_modules\/ws\//.test(i))).toBe(true);
  });

  it("deploys each function's own index.mjs and chunks from CDK's local bundling", async () => {
    const app = new App({ outdir: mkdtempSync(path.join(outdir, 'cdk.out-')) });
    const stack = new Stack(app, 'Bundled');
    // Two small functions built together, as the stack's functions are: each must get its own bundle,
    // and CDK must not hand the second the first one's cached bundle.
    const bundles = new FunctionBundles(['platform', 'keys'].map((folder) => functionEntry(ROOT, folder)));
    const props = { projectRoot: ROOT, timeout: Duration.seconds(10), environment: {}, bundles };
    new PlatformFunction(stack, 'Platform', { ...props, name: 'platform' });
    new PlatformFunction(stack, 'Keys', { ...props, name: 'keys' });
    const assembly = app.synth();
    const functions = Template.fromStack(stack).findResources('AWS::Lambda::Function');
    const assets = Object.values(functions).map((f) => {
      expect(f.Properties.Handler).toBe('index.handler');
      return path.join(assembly.directory, `asset.${String(f.Properties.Code.S3Key).replace(/\.zip$/, '')}`);
    });
    expect(new Set(assets).size).toBe(2);
    // Nothing of the set's build is left beside the assets.
    expect(readdirSync(assembly.directory).filter((f) => f.includes('-function-'))).toEqual([]);
    for (const asset of assets) {
      expect(readdirSync(asset).sort()).toEqual(['chunks', 'index.mjs', 'index.mjs.map']);
      expect(readdirSync(path.join(asset, 'chunks')).some((c) => c.endsWith('.mjs'))).toBe(true);
      expect(await evaluate(path.join(asset, 'index.mjs'), 'typeof m.handler')).toBe('function');
    }
  }, 120_000);
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

describe("the AI SDK's own zod copy", () => {
  const classicZod = (i: string) => /zod\/v4\/classic\//.test(i);

  it("keeps zod classic (the AI SDK's) out of the cold start of the functions that call models", () => {
    for (const folder of ['ai', 'gateway', 'runtime-model']) {
      const { inputs, initInputs } = bundleOf(folder);
      expect(initInputs.filter(classicZod), folder).toEqual([]);
      expect(
        initInputs.filter((i) => i.startsWith(`${AI_SDK_ZOD_NAMESPACE}:`)),
        folder,
      ).toEqual([]);
      // Shipped, in lazy chunks: the AI SDK's copy, core included.
      expect(
        inputs.some((i) => i.startsWith(`${AI_SDK_ZOD_NAMESPACE}:`) && i.includes('zod/v4/core/to-json-schema.js')),
        folder,
      ).toBe(true);
    }
  });

  it('reads which zod members an AI SDK module uses, and keeps the whole API when it cannot tell', async () => {
    const source = [
      'import { z as z2 } from "zod/v4";',
      'import * as z4 from "zod/v4";',
      'import { z } from "zod";',
      'const schema = z2.object({ kind: z2.enum(["a"]), n: z.null(), c: z.coerce.number() });',
      'const json = z4.toJSONSchema(schema);',
      // Not the bindings: a regular expression, a string, properties and keys of the same name.
      'const camel = (s) => s.replace(/[_-]([a-z])/g, "z2 z"); const o = { z2: 1 }; o.z4 = 2;',
    ].join('\n');
    expect(await zodMembersUsedBy('probe.mjs', source)).toEqual(new Set(['object', 'enum', 'null', 'coerce', 'toJSONSchema']));
    for (const wider of [
      'import { z as z2 } from "zod/v4"; register(z2);',
      'import { z as z2 } from "zod/v4"; export { z2 };',
      'import { z, ZodType } from "zod/v4"; z.string();',
      'import zod from "zod"; zod.string();',
      'import { z } from "zod/v4"; const k = z["string"];',
    ])
      expect(await zodMembersUsedBy('probe.mjs', wider), wider).toBeUndefined();
    // Reserved words are members too (`z.null`, `z.enum`): the module must still parse.
    const narrowed = zodMembersModule(['null', 'object']).replace(/^import .*$/m, 'const zod = { null: "N", object: "O", string: "S" };');
    const loaded = await import(`data:text/javascript,${encodeURIComponent(narrowed)}`);
    expect({ ...loaded }).toEqual({ null: 'N', object: 'O', z: { null: 'N', object: 'O' } });
  });

  it('ships only the zod members the AI SDK uses: no z.compile, no z.fromJSONSchema', () => {
    for (const folder of ['ai', 'gateway', 'runtime-model', 'skills']) {
      const { inputs } = bundleOf(folder);
      expect(
        inputs.filter((i) => /zod\/v4\/(core\/compile|classic\/from-json-schema)\.js$/.test(i)),
        folder,
      ).toEqual([]);
      const aiSdkZodImports = Object.entries(metafiles.get(folder)!.inputs).flatMap(([importer, input]) =>
        /node_modules\/(ai|@ai-sdk\/[^/]+)\//.test(importer) ? input.imports.filter((i) => /^zod(\/v4)?$/.test(i.original ?? '')).map((i) => i.path) : [],
      );
      expect(aiSdkZodImports.length, folder).toBeGreaterThan(0);
      for (const target of aiSdkZodImports) expect(target.startsWith(`${AI_SDK_ZOD_MEMBERS_NAMESPACE}:`), `${folder}: ${target}`).toBe(true);
    }
  });

  it('sends a provider the same tool JSON schemas, descriptions included, as the unbundled code', async () => {
    const models = await startFakeModelServer();
    try {
      const probe = path.join(ROOT, 'test/infra/fixtures/ai-tool-schemas.ts');
      const probeOut = path.join(outdir, 'ai-tool-schemas');
      const { metafile } = await build({ ...lambdaBuildOptions(probe, probeOut), sourcemap: false, absWorkingDir: ROOT, metafile: true, logLevel: 'silent' });
      const entry = Object.keys(metafile.outputs).find((o) => o.endsWith('/ai-tool-schemas/index.mjs'))!;
      // Two copies in this bundle: zod/mini's core at init, the AI SDK's in its lazy chunks.
      const initInputs = inputsOf(metafile, initLoadedOutputs(metafile, entry));
      expect(initInputs.some((i) => /^[^:]*zod\/v4\/core\/schemas\.js$/.test(i))).toBe(true);
      expect(initInputs.filter(classicZod)).toEqual([]);

      const bundledAnswers = await evaluate(path.resolve(ROOT, entry), `m.callWithTools(${JSON.stringify(models.baseUrl)})`);
      const unbundledAnswers = await (await import('./fixtures/ai-tool-schemas')).callWithTools(models.baseUrl);
      // The answers as the providers' zod schemas (the AI SDK's copy, narrowed per importer) parse them.
      expect(bundledAnswers).toEqual(JSON.parse(JSON.stringify(unbundledAnswers)));
      expect(unbundledAnswers.anthropic).toBe('fake answer to: and in a stream?');
      expect(unbundledAnswers.anthropicUsage).toMatchObject({ inputTokens: 10, outputTokens: 'fake answer to: and in a stream?'.length });
      const toolLists = models.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body.tools);
      expect(models.requests).toHaveLength(4);
      const [bundled, unbundled] = toolLists;
      expect(bundled).toEqual(unbundled);
      expect(JSON.stringify(bundled)).toContain('"description":"the city to look up"');
      expect(JSON.stringify(bundled)).toContain('"description":"a weather query"');
      expect(JSON.stringify(bundled)).toContain('"title":"Unit"');
    } finally {
      await models.close();
    }
  }, 60_000);
});

describe("the contract's documentation", () => {
  it('is removed from route and group objects only, and every lazySchema call is marked pure', async () => {
    const source = [
      'const Body = lazySchema(() => z.object({ a: z.string() }));',
      "const skill = { name: 'x', description: 'kept: a skill entry, not a route' };",
      "export const g = defineGroup({ group: 'g', description: 'group prose', routes: [",
      "  { operation: 'op', method: 'GET', path: '/p', auth: 'none', summary: 'route prose', description: 'more prose', body: Body, responses: () => ({ 200: Body() }) },",
      '] });',
    ].join('\n');
    const stripped = await withoutContractDocs(source);
    for (const gone of ['group prose', 'route prose', 'more prose', 'responses']) expect(stripped).not.toContain(gone);
    for (const kept of ["description: 'kept: a skill entry, not a route'", "operation: 'op'", 'body: Body', "group: 'g'"]) expect(stripped).toContain(kept);
    expect(stripped).toMatch(/\/\*\s*@__PURE__\s*\*\/\s*lazySchema\(/);
  });

  it('leaves a function with its request validation but without the prose and the response schemas', () => {
    // Bundles are megabytes of text: the checks say which phrase, not the whole text, when they fail.
    const has = (folder: string, phrase: string) => ({ [phrase]: bundleOf(folder).text.includes(phrase) });
    const requestValidation = 'must be a whole number followed by m, h or d';
    const routeProse = 'Counted from the records the account stores';
    const responseSchema = 'percent of the quota; above 100 when the table outgrew it';
    expect({ ...has('metrics', requestValidation), ...has('metrics', routeProse), ...has('metrics', responseSchema) }).toEqual({
      [requestValidation]: true,
      [routeProse]: false,
      [responseSchema]: false,
    });
    expect({ ...has('api-document', routeProse), ...has('api-document', responseSchema) }).toEqual({ [routeProse]: true, [responseSchema]: true });
  });

  it('refuses to build a function that reaches the document builder other than from its handler', async () => {
    const entry = path.join(ROOT, 'test/infra/fixtures/document-indirect-handler.ts');
    await expect(
      build({ ...lambdaBuildOptions(entry, path.join(outdir, 'document-indirect')), write: false, absWorkingDir: ROOT, logLevel: 'silent' }),
    ).rejects.toThrow(/reaches the OpenAPI document builder .*document-indirect\.ts.* but its handler does not import it/);
  });

  it('is all there in the document the api-document bundle serves: the same text as the sources give', async () => {
    const event = {
      version: '2.0',
      routeKey: 'GET /api/openapi.json',
      rawPath: '/api/openapi.json',
      rawQueryString: '',
      headers: {},
      requestContext: { http: { method: 'GET', path: '/api/openapi.json', sourceIp: '127.0.0.1' }, requestId: 'r1', routeKey: 'GET /api/openapi.json' },
      isBase64Encoded: false,
    };
    const context = "{ functionName: 'api-document', awsRequestId: 'r1', getRemainingTimeInMillis: () => 29000 }";
    const served = (await evaluate(bundleOf('api-document').file, `m.handler(${JSON.stringify(event)}, ${context}).then((r) => r.body)`)) as string;
    const fromSources = JSON.stringify(openApiDocument({ version: API_VERSION, serverUrl: config().appUrl }));
    expect({ length: served.length, same: served === fromSources }).toEqual({ length: fromSources.length, same: true });
  });
});

describe('the SDK barrels cut per importer', () => {
  const sesProtocol = (i: string) =>
    /@smithy\/core\/dist-es\/submodules\/protocols\/HttpBindingProtocol\.js|@aws-sdk\/core\/dist-es\/submodules\/protocols\/json\/AwsRestJsonProtocol\.js/.test(
      i,
    );
  const s3Protocol = (i: string) => /@aws-sdk\/core\/dist-es\/submodules\/protocols\/xml\//.test(i);

  it('cuts a barrel to the lines an importer needs, and keeps the real one when it cannot tell', () => {
    const barrel = 'export { A, B as C } from "./a";\nexport { D } from "./d";\nexport { E } from "@scope/e";\n';
    expect(namesTakenFrom('import { C, E as F } from "@smithy/core/x";\nexport { A } from "@smithy/core/x";', '@smithy/core/x')).toEqual(
      new Set(['C', 'E', 'A']),
    );
    expect(cutBarrel(barrel, new Set(['C', 'E']))).toBe('export { B as C } from "./a";\nexport { E } from "@scope/e";');
    expect(cutBarrel(barrel, new Set(['Z']))).toBeUndefined();
    expect(cutBarrel(`${barrel}export * from "./f";`, new Set(['D']))).toBeUndefined();
    // A barrel that also defines names (the serde barrel): re-exported names still come straight from
    // their files, imported-then-exported ones from theirs, and its own from the module of its own statements.
    const mixed = `import { bind } from "./bind";\nimport { g } from "./g";\n${barrel}export { g };\nexport const v4 = bind(g);\nexport class Blob extends bind(g) {\n}\n`;
    expect(cutBarrel(mixed, new Set(['D', 'g', 'v4', 'Blob']), 'own:x')).toBe(
      'export { D } from "./d";\nexport { g } from "./g";\nexport { v4 } from "own:x";\nexport { Blob } from "own:x";',
    );
    expect(cutBarrel(mixed, new Set(['v4']))).toBeUndefined();
    expect(barrelOwnStatements(mixed)).toBe(
      'import { bind } from "./bind";\nimport { g } from "./g";\n\n\n\nexport { g };\nexport const v4 = bind(g);\nexport class Blob extends bind(g) {\n}\n',
    );
    for (const wider of [
      'import * as x from "@smithy/core/x";',
      'import "@smithy/core/x";',
      'export * from "@smithy/core/x";',
      'import x, { A } from "@smithy/core/x";',
    ])
      expect(namesTakenFrom(wider, '@smithy/core/x'), wider).toBeUndefined();
  });

  it('leaves the SES and S3 protocol code out of the cold start, in the lazy chunks', () => {
    for (const [folder, lazyProtocol] of [
      ['accounts', sesProtocol],
      ['settings', sesProtocol],
      ['provisioner', s3Protocol],
      ['skills', s3Protocol],
    ] as const) {
      const { inputs, initInputs } = bundleOf(folder);
      expect(initInputs.filter(lazyProtocol), folder).toEqual([]);
      expect(inputs.some(lazyProtocol), folder).toBe(true);
    }
  });

  it("leaves the stream code of the serde barrel in the lazy S3 chunks, though the retry middleware at init takes the barrel's own v4", () => {
    const s3Streams = (i: string) => /@smithy\/core\/dist-es\/submodules\/serde\/util-stream\/(checksum\/ChecksumStream|sdk-stream-mixin)\.js$/.test(i);
    for (const folder of ['skills', 'provisioner']) {
      const { inputs, initInputs } = bundleOf(folder);
      expect(initInputs.filter(s3Streams), folder).toEqual([]);
      expect(inputs.filter(s3Streams), folder).toHaveLength(2);
      expect(
        initInputs.some((i) => i.startsWith(`${SDK_BARREL_OWN_NAMESPACE}:`) && i.endsWith('serde/index.js')),
        folder,
      ).toBe(true);
    }
  });

  it('sends the same S3 and SES requests from a bundle as from the sources', async () => {
    const requests: { method?: string; url?: string; contentType?: string; checksum?: string; body: string }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const checksum = Object.entries(req.headers).find(([h]) => h.startsWith('x-amz-checksum-'));
        requests.push({
          method: req.method,
          url: req.url,
          contentType: req.headers['content-type'],
          checksum: checksum?.join('='),
          body: Buffer.concat(chunks).toString(),
        });
        if (req.url!.startsWith('/v2/email/')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ MessageId: 'probe-message' }));
        } else {
          res.writeHead(200, { etag: '"probe-etag"' });
          res.end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const probeOut = path.join(outdir, 'lazy-aws-calls');
      const { metafile } = await build({
        ...lambdaBuildOptions(path.join(ROOT, 'test/infra/fixtures/lazy-aws-calls.ts'), probeOut),
        sourcemap: false,
        absWorkingDir: ROOT,
        metafile: true,
        logLevel: 'silent',
      });
      const entry = Object.keys(metafile.outputs).find((o) => o.endsWith('/lazy-aws-calls/index.mjs'))!;
      const initInputs = inputsOf(metafile, initLoadedOutputs(metafile, entry));
      expect(initInputs.some((i) => i.includes('@aws-sdk/client-dynamodb/'))).toBe(true);
      expect(initInputs.filter((i) => sesProtocol(i) || s3Protocol(i))).toEqual([]);

      const bundled = await evaluate(path.resolve(ROOT, entry), `m.callLazyClients(${JSON.stringify(endpoint)})`);
      const fromBundle = requests.splice(0);
      const unbundled = await (await import('./fixtures/lazy-aws-calls')).callLazyClients(endpoint);
      expect(bundled).toEqual({ etag: '"probe-etag"', messageId: 'probe-message' });
      expect(unbundled).toEqual(bundled);
      expect(fromBundle).toHaveLength(2);
      expect(fromBundle).toEqual(requests);
      expect(fromBundle[0]).toMatchObject({ method: 'PUT', url: expect.stringMatching(/^\/probe-bucket\/a\/b\.txt/), body: 'hello barrels' });
      expect(fromBundle[0]!.checksum).toMatch(/^x-amz-checksum-crc32=/);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 60_000);
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
    sendEvents: (b) => b.inputs.some((i) => i.endsWith('adapters/events-queue.ts')),
    sendProvisioning: (b) => b.text.includes('PROVISIONING_QUEUE_URL is not set'),
    dataKey: (b) => b.inputs.some((i) => i.endsWith('platform/crypto/envelope.ts')),
    sendEmail: (b) => b.inputs.some((i) => i.endsWith('adapters/email.ts')),
    describeTable: (b) => b.text.includes('"DescribeTable"'),
    launchTasks: (b) => b.inputs.some((i) => i.endsWith('adapters/launcher-ecs.ts')),
    stopTasks: (b) => b.inputs.some((i) => i.endsWith('adapters/launcher-ecs.ts')),
    reachInstances: (b) => b.text.includes('instance unreachable'),
    fileBucket: (b) => b.inputs.some((i) => i.endsWith('adapters/file-storage-s3.ts')),
    readRuntimeLogs: (b) => b.inputs.some((i) => i.endsWith('adapters/runtime-logs-cloudwatch.ts')),
    scanTable: (b) => b.text.includes('attribute_not_exists(globalKeys) AND attribute_exists(subdomain)'),
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
