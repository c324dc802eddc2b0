import { pathToFileURL } from 'node:url';
import path from 'node:path';
import type { LambdaHandler } from './server';
import { handlerPath } from '#contract/functions';

const ROOT = path.resolve(import.meta.dirname, '..');
const loaded = new Map<string, Promise<LambdaHandler>>();

/** The Lambda of a group, by the layout's convention `functions/<group>/handler.ts` (CDK uses the same). */
export function loadGroupHandler(group: string): Promise<LambdaHandler> {
  let p = loaded.get(group);
  if (!p) {
    const file = pathToFileURL(path.join(ROOT, handlerPath(group))).href;
    p = import(/* @vite-ignore */ file).then((m: { handler: LambdaHandler }) => m.handler);
    loaded.set(group, p);
  }
  return p;
}
