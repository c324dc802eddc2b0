import type { ChildProcess } from 'node:child_process';

/**
 * The processes the local stack starts (DynamoDB Local's JVM, agent runtimes) are announced here,
 * so the stack's supervisor (local/supervision.ts) can record them and make sure they die with
 * it, however it dies. Nobody listens in AWS or in tests: announcing is then a no-op.
 */
export type LocalChildKind = 'dynamodb-local' | 'runtime';
type Listener = (child: ChildProcess, kind: LocalChildKind) => void;

const listeners = new Set<Listener>();

export function onLocalChildSpawned(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function localChildSpawned(child: ChildProcess, kind: LocalChildKind): void {
  for (const listener of listeners) listener(child, kind);
}
