import { getAddress } from 'viem';
import { accountAccess } from '../../shared/billing/entitlements';
import { config } from '../../shared/config';
import { DEFAULT_GATEWAY_PLUGIN, GATEWAY_PAYMENT_METHODS, GATEWAY_PLUGIN_IDS, type GatewayPluginId } from '../../shared/contract/gateway';
import type { gatewayContract } from '../../shared/contract/gateway';
import { httpErrorOf } from '../../shared/http/domain-errors';
import { HttpError } from '../../shared/http/errors';
import { logger } from '../../shared/http/logger';
import type { OperationContext } from '../../shared/http/pipeline';
import { reply, type Reply } from '../../shared/http/reply';
import { issueChargeChallenge, mppEnabled, priceOf, redeemCharge } from '../../shared/mpp/charge';
import { isPaymentAuthorization, MPP_SCHEME, parsePaymentAuthorization } from '../../shared/mpp/credential';
import { ChainUnavailableError, PaymentRefusedError } from '../../shared/mpp/errors';
import { corsHeaders } from './cors';
import {
  isStreamingPlugin,
  parsePluginInput,
  PluginFailedError,
  runPlugin,
  streamPlugin,
  type PluginAnswer,
  type PluginCaller,
  type PluginInput,
} from './plugins';

type CallContext = OperationContext<(typeof gatewayContract)['routes'][0]>;

/** The fiat side of a plugin's price, as the card checkout shows it. */
const CARD_CURRENCY = 'usd';

const isPlugin = (id: string): id is GatewayPluginId => (GATEWAY_PLUGIN_IDS as readonly string[]).includes(id);

function pluginOf(ctx: CallContext): GatewayPluginId {
  const requested = ctx.headers['x-plugin-id']?.trim() || ctx.body.plugin || DEFAULT_GATEWAY_PLUGIN;
  if (!isPlugin(requested))
    throw new HttpError(502, 'no_plugin', undefined, { message: `no plugin named "${requested.slice(0, 64)}"; plugins: ${GATEWAY_PLUGIN_IDS.join(', ')}` });
  return requested;
}

/** Spec 4.12 priority: `X-Payment-Method`, then `Authorization: Payment` implies mpp, then card. */
function paymentMethodOf(ctx: CallContext): 'card' | 'mpp' {
  const chosen = ctx.headers['x-payment-method']?.trim().toLowerCase();
  if (chosen) {
    if (!(GATEWAY_PAYMENT_METHODS as readonly string[]).includes(chosen)) {
      throw new HttpError(400, `X-Payment-Method must be one of ${GATEWAY_PAYMENT_METHODS.join(', ')}`, 'INVALID_PAYMENT_METHOD');
    }
    return chosen as 'card' | 'mpp';
  }
  return isPaymentAuthorization(ctx.headers.authorization) ? 'mpp' : 'card';
}

function requireJson(ctx: CallContext) {
  const type = (ctx.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new HttpError(400, 'Content-Type must be application/json', 'UNSUPPORTED_CONTENT_TYPE');
}

const MPP_UNAVAILABLE = 'machine payments (MPP) are not available on this server; pay by card';

/** The 402 of spec 4.12, with a fresh nonce stored for this plugin's price whenever MPP is on. */
async function paymentRequired(plugin: GatewayPluginId, why: { code: string; message: string }): Promise<Reply> {
  const amount = priceOf(plugin);
  const card = { checkoutUrl: `/api/v1/payments/card/create?plugin=${encodeURIComponent(plugin)}`, amount: Number(amount), currency: CARD_CURRENCY };
  const base = { error: 'payment_required', code: why.code, message: why.message };
  if (!mppEnabled()) {
    const mpp = {
      scheme: MPP_SCHEME,
      amount,
      currency: getAddress(config().gateway.mpp.currency),
      recipient: null,
      description: MPP_UNAVAILABLE,
      nonce: null,
      expiresAt: null,
    };
    return reply.json(402, { ...base, mpp, card });
  }
  const challenge = await issueChargeChallenge(plugin);
  const currency = getAddress(challenge.currency);
  const recipient = getAddress(challenge.recipient);
  const mpp = {
    scheme: MPP_SCHEME,
    amount,
    currency,
    recipient,
    description:
      `One ${plugin} call: transfer ${amount} of token ${currency} (${challenge.baseUnits} base units) to ${recipient} on chain ${challenge.chainId}, ` +
      `then repeat the request with Authorization: Payment {"scheme":"${MPP_SCHEME}","transaction":"<tx hash>","challengeNonce":"${challenge.nonce}"}`,
    nonce: challenge.nonce,
    expiresAt: challenge.challengeExpiresAt,
  };
  return reply.json(402, { ...base, mpp, card }, { 'www-authenticate': `Payment amount=${amount}, currency=${currency}, recipient=${recipient}` });
}

type Payment = { method: 'card'; receipt: null } | { method: 'mpp'; receipt: string };

/** A served plugin: its answer, and for a streamed call the text deltas as they came. */
interface Served {
  answer: PluginAnswer;
  deltas?: string[];
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function success(plugin: GatewayPluginId, served: Served, payment: Payment): Reply {
  const timestamp = new Date().toISOString();
  const headers: Record<string, string> = { 'x-plugin-id': plugin };
  if (payment.method === 'mpp') {
    // draft-httpauth-payment-00: base64url JSON receipt, never cached by shared caches.
    const receipt = { status: 'success', method: MPP_SCHEME, reference: payment.receipt, timestamp };
    headers['payment-receipt'] = Buffer.from(JSON.stringify(receipt)).toString('base64url');
    headers['cache-control'] = 'private, no-store';
  }
  const body = { ...served.answer.extra, plugin, message: served.answer.message, timestamp, payment };
  if (!served.deltas) return reply.json(200, body, headers);
  const events = served.deltas.map((text) => sse('delta', { text })).join('') + sse('done', body);
  return reply.text(200, events, { ...headers, 'content-type': 'text/event-stream; charset=utf-8' });
}

/** The model layer's and the plugins' failures as the spec's gateway answers (500 `internal` with a code). */
function pluginFailure(err: unknown): never {
  if (err instanceof HttpError) throw err;
  const mapped = httpErrorOf(err);
  if (mapped && mapped.status !== 500) throw mapped;
  if (mapped) throw new HttpError(500, 'internal', mapped.code, { message: mapped.message });
  if (err instanceof PluginFailedError) throw new HttpError(500, 'internal', err.code, { message: err.message });
  logger().warn('gateway plugin failed', { error: (err as Error)?.name });
  throw new HttpError(500, 'internal', 'PLUGIN_FAILED', { message: 'the plugin failed; try again' });
}

async function serve(input: PluginInput, caller: PluginCaller, streamed: boolean): Promise<Served> {
  try {
    if (streamed && isStreamingPlugin(input)) {
      const { textStream, answer } = await streamPlugin(input, caller);
      const deltas: string[] = [];
      for await (const text of textStream) deltas.push(text);
      return { answer: await answer, deltas };
    }
    return { answer: await runPlugin(input, caller) };
  } catch (err) {
    pluginFailure(err);
  }
}

const wantsStream = (ctx: CallContext) => /\btext\/event-stream\b/i.test(ctx.headers.accept ?? '');

async function payByMpp(ctx: CallContext, plugin: GatewayPluginId, input: PluginInput): Promise<Reply> {
  if (!isPaymentAuthorization(ctx.headers.authorization)) {
    return paymentRequired(plugin, { code: 'PAYMENT_REQUIRED', message: 'send an MPP credential in Authorization: Payment' });
  }
  try {
    const credential = parsePaymentAuthorization(ctx.headers.authorization!);
    const served = await redeemCharge(credential, plugin, (payment) => serve(input, { kind: 'payer', ...payment }, wantsStream(ctx)));
    return success(plugin, served, { method: 'mpp', receipt: credential.transaction });
  } catch (err) {
    if (err instanceof PaymentRefusedError) return paymentRequired(plugin, { code: err.code, message: err.message });
    if (err instanceof ChainUnavailableError) throw new HttpError(503, 'the payment chain cannot be reached; retry shortly', 'CHAIN_UNAVAILABLE');
    throw err;
  }
}

/** Card: a session (cookie, Bearer JWT or API key) whose stored account has an active subscription. */
async function payByCard(ctx: CallContext, plugin: GatewayPluginId, input: PluginInput): Promise<Reply> {
  if (!ctx.auth) return paymentRequired(plugin, { code: 'PAYMENT_REQUIRED', message: 'sign in with an active subscription, or pay with MPP' });
  const access = await accountAccess(ctx.auth);
  if (!access.isAdmin && !access.subscriptionActive) {
    return paymentRequired(plugin, { code: 'SUBSCRIPTION_REQUIRED', message: 'an active subscription is required to pay by card, or pay with MPP' });
  }
  return success(plugin, await serve(input, { kind: 'account', auth: ctx.auth }, wantsStream(ctx)), { method: 'card', receipt: null });
}

export async function callGateway(ctx: CallContext): Promise<Reply> {
  const cors = corsHeaders(ctx.headers.origin);
  try {
    requireJson(ctx);
    const plugin = pluginOf(ctx);
    const method = paymentMethodOf(ctx);
    const { plugin: _named, ...fields } = ctx.body;
    const input = parsePluginInput(plugin, fields);
    const answer = method === 'mpp' ? await payByMpp(ctx, plugin, input) : await payByCard(ctx, plugin, input);
    return reply.json(answer.status, answer.body, { ...answer.headers, ...cors });
  } catch (err) {
    const known = httpErrorOf(err);
    if (known) throw new HttpError(known.status, known.message, known.code, known.extra, { ...known.headers, ...cors });
    throw err;
  }
}
