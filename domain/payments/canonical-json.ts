/**
 * JSON Canonicalization Scheme (RFC 8785) for the JSON values a payment request holds: object keys
 * sorted by UTF-16 code units, no whitespace, strings and numbers as ECMAScript's JSON.stringify
 * writes them (which is how RFC 8785 defines them). The drafts require the challenge's `request` in
 * this form; test/unit/mpp-memo.test.ts checks it against the canonicalizer the MPP SDK uses (ox).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError('JSON has no representation of a non-finite number');
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean' && value !== null) {
    throw new TypeError(`not a JSON value: ${typeof value}`);
  }
  return JSON.stringify(value);
}
