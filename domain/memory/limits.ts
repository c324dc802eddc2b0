import { MEMORY_BULK_MAX_KEYS, MEMORY_BULK_MAX_TOTAL_BYTES, MEMORY_VALUE_MAX_BYTES } from '#contract/memory';
import type { MemoryEntry } from '#data/memory';
import { invalid } from '#platform/errors';

/**
 * The stored form of a value is its compact JSON text, so the limit is measured on exactly what is
 * stored. (JSON.stringify escapes unpaired surrogates, so the text always survives UTF-8 storage.)
 */
export function encodeEntry(key: string, value: unknown): MemoryEntry {
  const encoded = JSON.stringify(value);
  const bytes = Buffer.byteLength(encoded, 'utf8');
  if (bytes > MEMORY_VALUE_MAX_BYTES) {
    throw invalid(`the value of "${key.slice(0, 64)}" is ${bytes} bytes once encoded; the limit is ${MEMORY_VALUE_MAX_BYTES}`, 'MEMORY_VALUE_TOO_LARGE', {
      limit: MEMORY_VALUE_MAX_BYTES,
    });
  }
  return { key, encoded, bytes };
}

/** Every limit of a bulk write, checked before anything is written. */
export function encodeBulk(memory: Record<string, unknown>): MemoryEntry[] {
  const names = Object.keys(memory);
  if (names.length === 0) throw invalid('memory must hold at least one key', 'MEMORY_EMPTY');
  if (names.length > MEMORY_BULK_MAX_KEYS) {
    throw invalid(`a bulk write holds at most ${MEMORY_BULK_MAX_KEYS} keys; this one has ${names.length}`, 'MEMORY_TOO_MANY_KEYS', {
      limit: MEMORY_BULK_MAX_KEYS,
    });
  }
  const entries = names.map((key) => encodeEntry(key, memory[key]));
  const total = entries.reduce((sum, e) => sum + e.bytes, 0);
  if (total > MEMORY_BULK_MAX_TOTAL_BYTES) {
    throw invalid(
      `the values of one bulk write may total at most ${MEMORY_BULK_MAX_TOTAL_BYTES} bytes once encoded; these total ${total}. Split the write.`,
      'MEMORY_BULK_TOO_LARGE',
      { limit: MEMORY_BULK_MAX_TOTAL_BYTES },
    );
  }
  return entries;
}
