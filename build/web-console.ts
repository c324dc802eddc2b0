/**
 * `npm run build:web`: bundles the web console (web/) with esbuild into web/dist/: one JS and one
 * CSS file with content hashes in their names (served with long-lived caching), and index.html
 * pointing at them. `npm start` calls `ensureConsoleBuilt` so a fresh clone serves it without a step.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { buildSync } from 'esbuild';

export const WEB_ROOT = path.resolve(import.meta.dirname, '../web');
export const CONSOLE_DIST = path.join(WEB_ROOT, 'dist');
/** Where the hashed files go under the console's origin. */
export const ASSET_PREFIX = '/assets/';

export interface ConsoleBuild {
  /** Initial JS + CSS files, relative to the dist folder. */
  files: string[];
  bytes: number;
  gzipBytes: number;
}

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.name === 'dist' || e.name.startsWith('dist.') ? [] : e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : [path.join(dir, e.name)],
  );

/**
 * Builds the console into `outDir`; answers the initial files and their sizes. Synchronous (the CDK
 * app builds it during synthesis too), and written beside the folder, then swapped in, so a server
 * or a synthesis reading the folder never sees half a build.
 */
export function buildConsole(outDir = CONSOLE_DIST): ConsoleBuild {
  const staging = `${outDir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  const assets = path.join(staging, ASSET_PREFIX);
  mkdirSync(assets, { recursive: true });
  const result = buildSync({
    entryPoints: [path.join(WEB_ROOT, 'src/main.tsx')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: assets,
    entryNames: 'console-[hash]',
    assetNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const outputs = Object.keys(result.metafile!.outputs).map((file) => path.relative(staging, path.resolve(file)));
  const js = outputs.find((f) => f.endsWith('.js'))!;
  const css = outputs.find((f) => f.endsWith('.css'));
  const template = readFileSync(path.join(WEB_ROOT, 'index.html'), 'utf8');
  const head = [css ? `<link rel="stylesheet" href="/${css}">` : '', `<script type="module" src="/${js}"></script>`].filter(Boolean).join('\n    ');
  writeFileSync(path.join(staging, 'index.html'), template.replace('<!-- assets -->', head));
  const files = [js, ...(css ? [css] : [])];
  const contents = files.map((f) => readFileSync(path.join(staging, f)));
  writeFileSync(path.join(staging, 'build.json'), JSON.stringify({ source: sourceDigest(), files }));
  rmSync(outDir, { recursive: true, force: true });
  renameSync(staging, outDir);
  return {
    files,
    bytes: contents.reduce((n, c) => n + c.length, 0),
    gzipBytes: contents.reduce((n, c) => n + gzipSync(c, { level: 9 }).length, 0),
  };
}

/** A digest of web/ (names, sizes, modification times): a changed source means a stale build. */
function sourceDigest(): string {
  const hash = createHash('sha256');
  for (const file of sourceFiles(WEB_ROOT).sort()) {
    const s = statSync(file);
    hash.update(`${path.relative(WEB_ROOT, file)}:${s.size}:${s.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** Builds the console when web/dist is missing or older than its sources; answers whether it built. */
export function ensureConsoleBuilt(outDir = CONSOLE_DIST): boolean {
  const stamp = path.join(outDir, 'build.json');
  if (existsSync(stamp) && (JSON.parse(readFileSync(stamp, 'utf8')) as { source: string }).source === sourceDigest()) return false;
  buildConsole(outDir);
  return true;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const built = buildConsole();
  process.stdout.write(`web console: ${built.files.join(', ')}: ${built.bytes} bytes, ${built.gzipBytes} gzipped\n`);
}
