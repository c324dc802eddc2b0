import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '#contract/document';
import { ERROR_MESSAGES, explainError } from '../../web/src/errors';

const doc = openApiDocument({ version: 'test' }) as {
  paths: Record<string, Record<string, { description?: string; responses?: Record<string, { description?: string }> }>>;
};

/** Settings are named in descriptions the same way codes are (`CARD_WEBHOOK_SECRET`): they are no answer. */
const settingNames = new Set(
  [...readFileSync(path.resolve(import.meta.dirname, '../../platform/config.ts'), 'utf8').matchAll(/^ {2}([A-Z][A-Z0-9_]+): \{/gm)].map((m) => m[1]!),
);
/** Capitals in backticks that are neither a code nor a setting. */
const NOT_CODES = new Set([
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'MON',
  'TUE',
  'WED',
  'THU',
  'FRI',
  'SAT',
  'SUN',
  'UTC',
  'USD',
  'GBP',
  'JSON',
  'JWT',
  'URL',
  'API',
  'HTTP',
]);

function descriptions(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) descriptions(item, out);
  else if (node && typeof node === 'object')
    for (const [key, value] of Object.entries(node)) {
      if ((key === 'description' || key === 'summary') && typeof value === 'string') out.push(value);
      else descriptions(value, out);
    }
  return out;
}

/**
 * The codes the contract declares: each response's `Codes:` list (the pipeline's codes and the
 * `code` constants and enums of the response schemas) and every code a description names in
 * backticks (`409 \`AGENT_NOT_RUNNING\``).
 */
function declaredCodes(): Set<string> {
  const codes = new Set<string>();
  for (const item of Object.values(doc.paths))
    for (const op of Object.values(item))
      for (const response of Object.values(op.responses ?? {})) {
        const list = /Codes: (.*)\.$/.exec(response.description ?? '')?.[1];
        for (const m of list?.matchAll(/`([^`]+)`/g) ?? []) codes.add(m[1]!);
      }
  for (const text of descriptions(doc))
    for (const m of text.matchAll(/`([A-Z][A-Z0-9_]*[A-Z0-9])`/g)) if (m[1]!.length > 2 && !settingNames.has(m[1]!) && !NOT_CODES.has(m[1]!)) codes.add(m[1]!);
  return codes;
}

describe("the console's words for every error code", () => {
  const codes = declaredCodes();

  it('finds the codes of the pipeline, of response schemas and of descriptions', () => {
    for (const code of ['AUTH_REQUIRED', 'CSRF_INVALID', 'MEMORY_VALUE_TOO_LARGE', 'AGENT_NOT_RUNNING', 'CARD_NOT_CONFIGURED', 'NO_CARD_CUSTOMER'])
      expect(codes).toContain(code);
    expect(codes).not.toContain('CARD_WEBHOOK_SECRET');
  });

  it('has a human message for every code the contract declares', () => {
    expect([...codes].filter((code) => !ERROR_MESSAGES[code]).sort()).toEqual([]);
  });

  it('never shows the code itself, and names the next step where there is one', () => {
    for (const [code, message] of Object.entries(ERROR_MESSAGES)) expect(message.text, code).not.toContain(code);
    expect(explainError(409, { error: 'agent not running', code: 'AGENT_NOT_RUNNING' }).next).toBe('start');
    expect(explainError(402, { error: 'subscription required' }).next).toBe('subscribe');
    expect(explainError(503, { error: 'card payments are not configured', code: 'CARD_NOT_CONFIGURED' })).toMatchObject({
      operator: true,
      text: 'This platform has no card processor configured; ask its operator.',
    });
    expect(explainError(429, { code: 'AGENT_LIMIT_REACHED', current: 3, limit: 3 }).text).toBe(
      'Your plan allows 3 agents and you have 3 of 3. Upgrade on the Billing page or remove one.',
    );
  });
});
