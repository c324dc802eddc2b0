import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { checkLayers, type Import } from '#build/layers';

const root = path.resolve(import.meta.dirname, '../..');

/** Where HttpError and its shorthands live: the pipeline's answer type, http's alone. */
const HTTP_ERRORS = 'http/errors.ts';

/** Every place a file names HttpError: imported under any name, or constructed. */
function httpErrorUses(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const uses: string[] = [];
  const at = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node) => {
    if (ts.isImportSpecifier(node) && (node.propertyName ?? node.name).text === 'HttpError') uses.push(`${at(node)} imports HttpError`);
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'HttpError') uses.push(`${at(node)} constructs HttpError`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses;
}

/** What a set of files does against the rule: an import of http/errors.ts, or HttpError named at all. */
function functionsMappingHttp(imports: readonly Import[], read: (file: string) => string): string[] {
  const files = [...new Set(imports.map((i) => i.from))].filter((f) => f.startsWith('functions/'));
  const viaImport = imports.filter((i) => i.from.startsWith('functions/') && i.to === HTTP_ERRORS).map((i) => `${i.from} imports ${i.specifier}`);
  return [...viaImport, ...files.flatMap((f) => httpErrorUses(f, read(f)))];
}

describe('functions/ throws domain failures and never maps them to HTTP', () => {
  const { imports } = checkLayers(root);
  const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

  it('no file under functions/ imports #http/errors or names HttpError', () => {
    const functionFiles = new Set(imports.filter((i) => i.from.startsWith('functions/')).map((i) => i.from));
    expect(functionFiles.size).toBeGreaterThan(50);
    expect(functionsMappingHttp(imports, read)).toEqual([]);
  });

  it('catches an import of #http/errors, a renamed HttpError and a construction', () => {
    const planted: Import[] = [
      { from: 'functions/http/x/handler.ts', specifier: '#http/errors', to: HTTP_ERRORS },
      { from: 'functions/http/y/handler.ts', specifier: '#http/pipeline', to: 'http/pipeline.ts' },
    ];
    const sources: Record<string, string> = {
      'functions/http/x/handler.ts': "import { badRequest } from '#http/errors';\nexport const f = () => badRequest('x');\n",
      'functions/http/y/handler.ts': "import { HttpError as Answer } from '#http/pipeline';\nexport const g = () => new HttpError(400, 'x');\n",
    };
    expect(functionsMappingHttp(planted, (f) => sources[f]!)).toEqual([
      'functions/http/x/handler.ts imports #http/errors',
      'functions/http/y/handler.ts:1 imports HttpError',
      'functions/http/y/handler.ts:2 constructs HttpError',
    ]);
  });
});

/** The folders whose failures reach the pipeline; runtime/ is its own package and keeps its own errors. */
const PRODUCT = /^(platform|adapters|data|domain|http|functions)\//;

/**
 * Error classes that stay plain Errors, each for a reason: the pipeline's answer type itself,
 * signals a caller catches to pick another path (never answered as such), and the platform's own
 * breakdowns that must stay the logged, generic 500 `internal error` rather than show their message.
 */
const NOT_DOMAIN_FAILURES: Record<string, string> = {
  'http/errors.ts HttpError': 'the pipeline answer every failure becomes',
  'data/tenant.ts ConditionFailedError': 'a lost condition each caller reads as its own outcome; the pipeline answers a stray one 409',
  'data/instances.ts IllegalTransitionError': 'the provisioner and reconciler skip a transition the state machine refuses',
  'data/skills/daily-counter.ts DailyLimitExceededError':
    'a shared counter: each caller answers its own limit (emails 429, transfers 400, channel messages 429)',
  'data/skills/files.ts UploadAlreadyConfirmedError': 'a concurrent confirmation: the caller answers with the file it stored',
  'data/skills/splits.ts ExecutionOpenError': 'an execution still open: the caller reads it back',
  'data/budgets.ts BudgetExceededDbError': 'the metering pulls the kill switch, then throws the model layer BudgetExceededError',
  'domain/billing/credits.ts InsufficientCreditsError': 'the metering falls back to the plan allowance or throws InsufficientCreditsAiError',
  'domain/billing/credits.ts DuplicateCreditEntryError': 'a retried credit entry: callers treat it as done',
  'domain/chat/chat.ts StillWakingError': 'the chat answers 202 and keeps the message while the instance wakes',
  'domain/auth/jwt.ts TokenInvalidError': 'authenticate turns it into AuthFailureError',
  'domain/auth/jwt.ts AuthConfigError': 'authenticate turns it into AuthFailureError',
  'domain/payments/errors.ts PaymentRefusedError': 'the gateway answers it with a 402 payment challenge, a body and headers the table does not give',
  'adapters/launcher.ts LaunchError': 'the provisioner records its message as the launch failure',
  'adapters/launcher.ts RuntimeUnreachableError': 'callers skip an instance that does not answer, or name what did not answer',
  'adapters/streaming.ts StreamingError': 'the key rotation answers 502 STREAMING_UNAVAILABLE; elsewhere it stays a logged 500',
  'adapters/url-guard.ts BlockedUrlError': 'the webhook routes answer it 400 URL_NOT_ALLOWED with its reason',
  'adapters/email.ts EmailRejectedError': 'a refused recipient: senders mark it rejected and go on',
  'adapters/oauth-providers.ts ProviderError': 'the OAuth exchange tells a provider failure from a domain failure by it',
  'adapters/email-queue.ts EmailQueueNotConfiguredError': 'a deployment fault: a logged 500',
  'adapters/provisioning-queue.ts QueueNotConfiguredError': 'a deployment fault: a logged 500',
  'platform/config.ts ConfigError': 'a deployment fault: a logged 500',
  'platform/crypto/key-providers.ts UnwrapError': 'envelope decryption turns it into EnvelopeError',
  'platform/crypto/key-providers.ts KeyCustodyConfigError': 'each route names missing key custody its own way (500 or 503); elsewhere a logged 500',
  'platform/crypto/envelope.ts EnvelopeError': 'a record that does not open: a logged 500, its reason never shown',
  'functions/workers/webhook-delivery/mailer.ts MailBeingSentError': 'the queue retries the message later',
  'functions/workers/webhook-delivery/deliver.ts DeliveryRefusedError': 'the delivery worker records the status and retries',
  'functions/workers/provisioner/handler.ts BusyError': 'the queue retries the message later',
};

/** Every class a product file declares with an `extends`: `file ClassName`, and the class it extends. */
function classesIn(file: string, text: string): { id: string; base: string }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: { id: string; base: string }[] = [];
  const visit = (node: ts.Node) => {
    const base = ts.isClassDeclaration(node) ? node.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0] : undefined;
    if (ts.isClassDeclaration(node) && node.name && base) found.push({ id: `${file} ${node.name.text}`, base: base.expression.getText(source) });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('every error class of the product is a DomainError, but the few that are not failures', () => {
  const { imports } = checkLayers(root);
  const files = [...new Set(imports.map((i) => i.from))].filter((f) => PRODUCT.test(f) && f.endsWith('.ts'));
  const declared = files.flatMap((f) => classesIn(f, readFileSync(path.join(root, f), 'utf8')));
  const classes = declared.map((c) => c.id);

  it('each exported class that is an Error extends DomainError, or is listed with its reason', async () => {
    const { DomainError } = await import('#platform/errors');
    expect(classes.length).toBeGreaterThan(60);
    const offenders: string[] = [];
    const errorClasses: string[] = [];
    for (const file of new Set(classes.map((c) => c.split(' ')[0]!))) {
      const module: Record<string, unknown> = await import(path.join(root, file));
      for (const [name, value] of Object.entries(module)) {
        if (typeof value !== 'function' || !(value.prototype instanceof Error)) continue;
        if (!classes.includes(`${file} ${name}`)) continue; // re-exported: checked where it is declared
        errorClasses.push(`${file} ${name}`);
        const isDomain = value.prototype instanceof DomainError || value === DomainError;
        if (!isDomain && !NOT_DOMAIN_FAILURES[`${file} ${name}`]) offenders.push(`${file} ${name}`);
      }
    }
    // A class its module keeps to itself cannot be imported: one that extends Error directly must be listed.
    const unexported = declared.filter((c) => !errorClasses.includes(c.id) && /^(Error|TypeError)$/.test(c.base) && !NOT_DOMAIN_FAILURES[c.id]);
    expect(errorClasses.length).toBeGreaterThan(40);
    expect([...offenders, ...unexported.map((c) => c.id)]).toEqual([]);
  });

  it('lists no class that is a DomainError by now or no longer exists', async () => {
    const { DomainError } = await import('#platform/errors');
    const stale: string[] = [];
    for (const entry of Object.keys(NOT_DOMAIN_FAILURES)) {
      const [file, name] = entry.split(' ') as [string, string];
      const value = (await import(path.join(root, file)).catch(() => ({})))[name];
      const keptToItsModule = value === undefined && classes.includes(entry);
      if (!keptToItsModule && (typeof value !== 'function' || value.prototype instanceof DomainError)) stale.push(entry);
    }
    expect(stale).toEqual([]);
  });
});
