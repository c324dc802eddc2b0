/**
 * Captures (and keeps off the terminal) what the Powertools logger writes: JSON lines on
 * stdout/stderr, pushed into `lines`, so a test can scan every log line for key material.
 * Returns the function that restores the streams.
 */
export function captureWrites(lines: string[]): () => void {
  const originals = { out: process.stdout.write, err: process.stderr.write };
  const tap = ((chunk: unknown, ...rest: unknown[]) => {
    lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    done?.();
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = tap;
  process.stderr.write = tap;
  return () => {
    process.stdout.write = originals.out;
    process.stderr.write = originals.err;
  };
}
