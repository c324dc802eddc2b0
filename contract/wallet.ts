import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, IsoDate } from './common';
import { defineGroup, lazySchema } from './route';
import { EVM_ADDRESS } from './evm';

export const WalletAddress = lazySchema(() => z.string().check(z.regex(EVM_ADDRESS, 'must be a 0x-prefixed 20-byte hex address')));
export const WalletNetwork = lazySchema(() => z.enum(['l2-test', 'l2-main']));

/** `unavailable` when the chain RPC is unset, down or slower than its bound: never a 500 and never a made-up number. */
export const BALANCE_UNAVAILABLE = 'unavailable';
const Balance = lazySchema(() =>
  z
    .union([z.string().check(z.regex(/^\d+(\.\d+)?$/, 'must be a decimal amount')), z.literal(BALANCE_UNAVAILABLE)])
    .check(z.describe('native balance in ether units (decimal string), or `unavailable` when the chain RPC cannot be read')),
);
const SetupHint = lazySchema(() => z.string().check(z.describe('what the operator must configure: names of the missing settings, never their values')));

/** Features the hosted wallet advertises; the stablecoin transfer feature is named `send_<stablecoin>`. */
const HostedWalletFeature = lazySchema(() =>
  z.union([z.enum(['create_wallet', 'get_balance', 'trade_tokens', 'x402_payments']), z.string().check(z.regex(/^send_[a-z0-9]+$/))]),
);

export const HostedWalletConfigured = lazySchema(() =>
  z.object({
    agenticWallet: z.object({
      status: z.literal('configured'),
      projectId: z.string(),
      features: z.array(HostedWalletFeature()),
    }),
    instructions: z.string(),
  }),
);

export const UserWallet = lazySchema(() =>
  z.object({
    address: WalletAddress(),
    balance: Balance(),
    network: WalletNetwork(),
    hasWallet: z.literal(true),
    createdAt: IsoDate(),
  }),
);

export const NoWallet = lazySchema(() =>
  z.object({
    address: z.null(),
    balance: Balance(),
    network: WalletNetwork(),
    hasWallet: z.literal(false),
    message: z.string(),
  }),
);

export const WalletActionBody = lazySchema(() =>
  z.strictObject({
    action: z.enum(['create', 'get_seed', 'export_seed']),
  }),
);

export const CreateWalletBody = lazySchema(() =>
  z.strictObject({
    email: z.email(),
  }),
);

export const HostedWalletBody = lazySchema(() =>
  z.strictObject({
    privateKey: z
      .optional(z.string().check(z.regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key')))
      .check(z.describe('key to import; a new one is generated when omitted. Stored encrypted, never returned or logged')),
  }),
);

export const walletContract = defineGroup({
  group: 'wallet',
  description: [
    'Wallets (spec 4.9). An account has one wallet; its private key is envelope-encrypted server-side (encryption context = the owning user)',
    'and is never returned or logged: no route answers with key material, `export_seed` is always 403.',
    'The hosted-wallet routes (`/api/wallet/create`, `/api/wallet/hosted`) require a session although the spec shows none:',
    'key creation is never left open to anonymous callers.',
  ].join(' '),
  dynamoOnly: false,
  routes: [
    {
      operation: 'getWallet',
      method: 'GET',
      path: '/api/wallet',
      auth: 'optional',
      summary: "The caller's wallet (or that there is none); without a session, the hosted wallet description when the hosted wallet is configured.",
      description: [
        "With a session: the caller's wallet (`hasWallet: true`) or `{address: null, hasWallet: false, message}`.",
        '`network` is the configured chain the balance is read from; `balance` is `unavailable` when that RPC cannot be read within its time bound.',
        'Without a session: the hosted-wallet description when the hosted wallet is configured (no auth needed, as the spec says), else 401.',
      ].join(' '),
      responses: () => ({
        ...commonErrorResponses(),
        200: z.union([UserWallet(), NoWallet(), HostedWalletConfigured()]),
      }),
    },
    {
      operation: 'runWalletAction',
      method: 'POST',
      path: '/api/wallet',
      auth: 'session',
      summary: "Create the caller's wallet (`create`) or read its public details (`get_seed`, no key material); `export_seed` is always refused.",
      description: [
        '`create`: 400 `WALLET_EXISTS` when the account already has a wallet. `get_seed`: 404 when it has none; answers only the address,',
        'network, creation time and a warning, never a seed or key. `export_seed`: always 403 `{error}`.',
      ].join(' '),
      body: WalletActionBody,
      example: { action: 'create' },
      responses: () => ({
        ...commonErrorResponses(),
        200: z.union([
          z.object({ address: WalletAddress(), network: WalletNetwork(), message: z.string() }),
          z.object({ address: WalletAddress(), network: WalletNetwork(), createdAt: IsoDate(), warning: z.string() }),
        ]),
        400: z.union([commonErrorResponses()[400], z.looseObject({ error: z.string(), code: z.literal('WALLET_EXISTS') })]),
        403: ErrorBody(),
        404: ErrorBody(),
        500: z.union([z.looseObject({ error: z.string(), setup: SetupHint() }), ErrorBody()]),
      }),
    },
    {
      operation: 'getWalletAddress',
      method: 'GET',
      path: '/api/wallet/address',
      auth: 'optional',
      summary: "The caller's wallet address, or that authentication is needed.",
      description: [
        'With a session: `{authenticated: true, address}` (`address` is null while the account has no wallet).',
        'Without one: `{authenticated: false, needsAuth: true, message}`; when wallet key custody is not configured (no KMS key in AWS):',
        '`{authenticated: false, needsAuth: true, error, setup}`.',
      ].join(' '),
      responses: () => ({
        ...commonErrorResponses(),
        200: z.union([
          z.object({ authenticated: z.literal(true), address: z.nullable(WalletAddress()) }),
          z.object({ authenticated: z.literal(false), needsAuth: z.literal(true), message: z.string() }),
          z.object({ authenticated: z.literal(false), needsAuth: z.literal(true), error: z.string(), setup: SetupHint() }),
        ]),
      }),
    },
    {
      operation: 'createHostedWalletForEmail',
      method: 'POST',
      path: '/api/wallet/create',
      auth: 'session',
      summary: 'Create a hosted wallet for the caller, usable on the test and main networks.',
      description: [
        "Requires a session (the spec shows none; key creation is not left open). `email` must be the caller's account email (403 otherwise):",
        'it names the wallet owner and grants nothing. 400 when `email` is missing or malformed, or the account already has a wallet (`WALLET_EXISTS`);',
        '503 `HOSTED_WALLET_NOT_CONFIGURED` with `setup` when the hosted wallet is not configured (a state of the platform, not a failure), 500 with `details` (a short reason, never secrets) on another failure.',
      ].join(' '),
      body: CreateWalletBody,
      example: { email: 'dj.nova@example.com' },
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({
          success: z.literal(true),
          walletAddress: WalletAddress(),
          walletId: z.string(),
          networks: z.array(WalletNetwork()),
        }),
        400: z.union([commonErrorResponses()[400], z.looseObject({ error: z.string(), code: z.literal('WALLET_EXISTS') })]),
        500: z.union([z.looseObject({ error: z.string(), details: z.string() }), ErrorBody()]),
        503: z.looseObject({ error: z.string(), code: z.literal('HOSTED_WALLET_NOT_CONFIGURED'), setup: SetupHint() }),
      }),
    },
    {
      operation: 'getHostedWalletInfo',
      method: 'GET',
      path: '/api/wallet/hosted',
      auth: 'session',
      summary: 'Describe the hosted wallet: an EVM wallet on the main and test networks.',
      description: 'Requires a session (the spec shows none; the hosted-wallet routes are not left open). A fixed description; needs no provider.',
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ status: z.literal('ok'), type: z.literal('evm_wallet'), supportedChains: z.array(WalletNetwork()) }),
      }),
    },
    {
      operation: 'createHostedWallet',
      method: 'POST',
      path: '/api/wallet/hosted',
      auth: 'session',
      summary: "Set up the caller's hosted wallet on the test network from a given private key, or from a newly generated one.",
      description: [
        'Requires a session (the spec shows none; key creation is not left open). The key is stored envelope-encrypted and never returned or logged;',
        "the answer carries only the address. It is held in the platform's own key custody, so it needs no hosted-wallet provider.",
        '400 when the key is not a valid secp256k1 private key (`INVALID_PRIVATE_KEY`) or the account already has a wallet (`WALLET_EXISTS`);',
        '409 `WALLET_ADDRESS_TAKEN` when another account already holds that key.',
      ].join(' '),
      body: HostedWalletBody,
      // No key: a published example key is swept by bots the moment it holds funds, so the example asks for a generated one.
      example: {},
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ success: z.literal(true), address: WalletAddress(), network: z.literal('l2-test') }),
        400: z.union([commonErrorResponses()[400], z.looseObject({ error: z.string(), code: z.enum(['WALLET_EXISTS', 'INVALID_PRIVATE_KEY']) })]),
        409: ErrorBody(),
        500: z.union([z.looseObject({ error: z.string(), setup: SetupHint() }), ErrorBody()]),
      }),
    },
  ],
});
