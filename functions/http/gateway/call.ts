import { accountAccess } from '#domain/billing/entitlements';
import { gatewayCardPrice, redeemGatewayReceipt } from '#domain/payments/gateway-card';
import { gatewayConfig } from '#platform/config';
import {
  DEFAULT_GATEWAY_PLUGIN,
  GATEWAY_PAYMENT_METHODS,
  GATEWAY_PLUGIN_IDS,
  isGatewayPluginId,
  type GatewayPaymentCode,
  type GatewayPluginId,
} from '#contract/gateway';
import type { gatewayContract } from '#contract/gateway';
import { isGatewayReceiptToken } from '#data/gateway-receipts';
import { DomainError, invalid, upstreamFailed } from '#platform/errors';
import { logger } from '#http/logger';
import type { OperationContext } from '#http/pipeline';
import { reply, StreamReply, type Reply } from '#http/reply';
import { challengeMemo, issueChargeChallenge, mppEnabled, priceOf, redeemCharge } from '#domain/payments/charge';
import { isPaymentAuthorization, MPP_SCHEME, parsePaymentAuthorization } from '#domain/payments/credential';
import { PaymentRefusedError } from '#domain/payments/errors';
import { paymentChallengeHeader, paymentProblem } from './challenge';
import { isStreamingPlugin, parsePluginInput, runPlugin, streamPlugin, type PluginAnswer, type PluginCaller, type PluginInput } from './plugins';

type CallContext = OperationContext<(typeof gatewayContract)['routes'][0]>;

function pluginOf(ctx: CallContext): GatewayPluginId {
  const requested = ctx.headers['x-plugin-id']?.trim() || ctx.body.plugin || DEFAULT_GATEWAY_PLUGIN;
  if (!isGatewayPluginId(requested))
    throw upstreamFailed('no_plugin', undefined, { message: `no plugin named "${requested.slice(0, 64)}"; plugins: ${GATEWAY_PLUGIN_IDS.join(', ')}` });
  return requested;
}

/** Spec 4.12 priority: `X-Payment-Method`, then `Authorization: Payment` implies mpp, then card. */
function paymentMethodOf(ctx: CallContext): 'card' | 'mpp' {
  const chosen = ctx.headers['x-payment-method']?.trim().toLowerCase();
  if (chosen) {
    if (!(GATEWAY_PAYMENT_METHODS as readonly string[]).includes(chosen)) {
      throw invalid(`X-Payment-Method must be one of ${GATEWAY_PAYMENT_METHODS.join(', ')}`, 'INVALID_PAYMENT_METHOD');
    }
    return chosen as 'card' | 'mpp';
  }
  return isPaymentAuthorization(ctx.headers.authorization) ? 'mpp' : 'card';
}

function requireJson(ctx: CallContext) {
  const type = (ctx.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw invalid('Content-Type must be application/json', 'UNSUPPORTED_CONTENT_TYPE');
}

const MPP_UNAVAILABLE = 'machine payments (MPP) are not available on this server; pay by card';

/** The 402 of spec 4.12, with a fresh nonce stored for this plugin's price whenever MPP is on. */
async function paymentRequired(plugin: GatewayPluginId, why: { code: GatewayPaymentCode; message: string }): Promise<Reply> {
  const { getAddress } = await import('#platform/lazy/viem-address');
  const amount = priceOf(plugin);
  const cardPrice = gatewayCardPrice(plugin);
  const card = { checkoutUrl: `/api/v1/payments/card/create?plugin=${encodeURIComponent(plugin)}`, amount: cardPrice.amount, currency: cardPrice.currency };
  const base = { error: 'payment_required', code: why.code, message: why.message };
  if (!mppEnabled()) {
    const mpp = {
      scheme: MPP_SCHEME,
      amount,
      currency: getAddress(gatewayConfig().mpp.currency),
      recipient: null,
      description: MPP_UNAVAILABLE,
      nonce: null,
      expiresAt: null,
      chainId: gatewayConfig().mpp.chainId,
      memo: null,
    };
    return reply.json(402, { ...base, ...paymentProblem(why.code, why.message, null), mpp, card });
  }
  const challenge = await issueChargeChallenge(plugin);
  const memo = await challengeMemo(challenge);
  const currency = getAddress(challenge.currency);
  const recipient = getAddress(challenge.recipient);
  const mpp = {
    scheme: MPP_SCHEME,
    amount,
    currency,
    recipient,
    description:
      `One ${plugin} call: call transferWithMemo(${recipient}, ${challenge.baseUnits}, ${memo}) on token ${currency} (${amount} at 6 decimals) on chain ${challenge.chainId}, ` +
      `then repeat the request with Authorization: Payment {"scheme":"${MPP_SCHEME}","transaction":"<tx hash>","challengeNonce":"${challenge.nonce}"}. ` +
      'Push mode only: this server does not broadcast signed transactions.',
    nonce: challenge.nonce,
    expiresAt: challenge.challengeExpiresAt,
    chainId: challenge.chainId,
    memo,
  };
  const header = paymentChallengeHeader({
    id: challenge.nonce,
    realm: challenge.realm,
    amount,
    baseUnits: challenge.baseUnits,
    currency,
    recipient,
    chainId: challenge.chainId,
    memo,
    expiresAt: challenge.challengeExpiresAt,
  });
  return reply.json(402, { ...base, ...paymentProblem(why.code, why.message, challenge.nonce), mpp, card }, { 'www-authenticate': header });
}

type Payment = { method: 'card'; receipt: null } | { method: 'mpp'; receipt: string };

/** A served plugin: its complete answer, or (streamed) its text deltas with the answer they add up to. */
type PluginStream = Awaited<ReturnType<typeof streamPlugin>>;
type Served = { answer: PluginAnswer } | { stream: PluginStream };

function success(plugin: GatewayPluginId, served: Served, payment: Payment): Reply | StreamReply {
  const headers: Record<string, string> = { 'x-plugin-id': plugin };
  if (payment.method === 'mpp') {
    // draft-httpauth-payment-00: base64url JSON receipt, never cached by shared caches.
    const receipt = { status: 'success', method: MPP_SCHEME, reference: payment.receipt, timestamp: new Date().toISOString() };
    headers['payment-receipt'] = Buffer.from(JSON.stringify(receipt)).toString('base64url');
    headers['cache-control'] = 'private, no-store';
  }
  const bodyOf = (answer: PluginAnswer) => ({ ...answer.extra, plugin, message: answer.message, timestamp: new Date().toISOString(), payment });
  if ('answer' in served) return reply.json(200, bodyOf(served.answer), headers);
  return new StreamReply(streamedEvents(served.stream, bodyOf), headers);
}

/**
 * `delta` {text} per chunk as the model sends it, then `done` with the success body. The call was
 * served (and an MPP payment spent) once the first chunk existed; a provider failure after that
 * ends the stream with `error` {error: "internal", code, message} instead of `done`.
 */
async function* streamedEvents(stream: PluginStream, bodyOf: (a: PluginAnswer) => unknown) {
  try {
    for await (const text of stream.textStream) yield { event: 'delta', data: { text } };
    yield { event: 'done', data: bodyOf(await stream.answer) };
  } catch (err) {
    const failure = pluginFailureOf(err);
    yield { event: 'error', data: { error: failure.message, code: failure.code, ...failure.details } };
  }
}

/**
 * The model layer's and the plugins' failures as the spec's gateway answers: a failure of the
 * platform's own side is 500 `internal` with its code and its message as a field; the others keep
 * their kind.
 */
function pluginFailureOf(err: unknown): DomainError {
  if (err instanceof DomainError)
    return err.kind === 'internal' ? new DomainError('internal', 'internal', err.code, { message: err.message }, {}, { cause: err }) : err;
  logger().warn('gateway plugin failed', { error: (err as Error)?.name });
  return new DomainError('internal', 'internal', 'PLUGIN_FAILED', { message: 'the plugin failed; try again' }, {}, { cause: err });
}

/**
 * Runs the plugin. A streamed call returns once the model sent its first chunk (the model layer
 * waits for it), so a failure before the first byte still throws here and leaves an MPP payment
 * redeemable; from the first chunk on the call counts as served.
 */
async function serve(input: PluginInput, caller: PluginCaller, streamed: boolean): Promise<Served> {
  try {
    if (streamed && isStreamingPlugin(input)) {
      const stream = await streamPlugin(input, caller);
      // Read through `streamedEvents`; a reader that goes away must not leave an unhandled rejection.
      stream.answer.catch(() => {});
      return { stream };
    }
    return { answer: await runPlugin(input, caller) };
  } catch (err) {
    throw pluginFailureOf(err);
  }
}

const wantsStream = (ctx: CallContext) => /\btext\/event-stream\b/i.test(ctx.headers.accept ?? '');

async function payByMpp(ctx: CallContext, plugin: GatewayPluginId, input: PluginInput): Promise<Reply | StreamReply> {
  if (!isPaymentAuthorization(ctx.headers.authorization)) {
    return paymentRequired(plugin, { code: 'PAYMENT_REQUIRED', message: 'send an MPP credential in Authorization: Payment' });
  }
  try {
    const credential = parsePaymentAuthorization(ctx.headers.authorization!);
    const served = await redeemCharge(credential, plugin, (payment) => serve(input, { kind: 'payer', ...payment }, wantsStream(ctx)));
    return success(plugin, served, { method: 'mpp', receipt: credential.transaction });
  } catch (err) {
    if (err instanceof PaymentRefusedError) return paymentRequired(plugin, { code: err.code, message: err.message });
    throw err;
  }
}

/** `Authorization: Bearer gwr_…`: a prepaid card receipt, which the auth pipeline passes over. */
function receiptTokenOf(ctx: CallContext): string | undefined {
  const token = /^bearer\s+(\S+)\s*$/i.exec(ctx.headers.authorization ?? '')?.[1];
  return token && isGatewayReceiptToken(token) ? token : undefined;
}

/** One call paid by a one-off card checkout: the receipt is spent once, and stays redeemable if the plugin fails. */
async function payByReceipt(ctx: CallContext, plugin: GatewayPluginId, input: PluginInput, token: string): Promise<Reply | StreamReply> {
  try {
    const served = await redeemGatewayReceipt(token, plugin, (paidBy) => serve(input, { kind: 'payer', ...paidBy }, wantsStream(ctx)));
    return success(plugin, served, { method: 'card', receipt: null });
  } catch (err) {
    if (err instanceof PaymentRefusedError) return paymentRequired(plugin, { code: err.code, message: err.message });
    throw err;
  }
}

/** Card: a prepaid receipt, or a session (cookie, Bearer JWT or API key) whose stored account has an active subscription. */
async function payByCard(ctx: CallContext, plugin: GatewayPluginId, input: PluginInput): Promise<Reply | StreamReply> {
  const receiptToken = receiptTokenOf(ctx);
  if (receiptToken) return payByReceipt(ctx, plugin, input, receiptToken);
  if (!ctx.auth) return paymentRequired(plugin, { code: 'PAYMENT_REQUIRED', message: 'sign in with an active subscription, or pay with MPP' });
  const access = await accountAccess(ctx.auth);
  if (!access.isAdmin && !access.subscriptionActive) {
    return paymentRequired(plugin, { code: 'SUBSCRIPTION_REQUIRED', message: 'an active subscription is required to pay by card, or pay with MPP' });
  }
  return success(plugin, await serve(input, { kind: 'account', auth: ctx.auth }, wantsStream(ctx)), { method: 'card', receipt: null });
}

export async function callGateway(ctx: CallContext): Promise<Reply | StreamReply> {
  requireJson(ctx);
  const plugin = pluginOf(ctx);
  const method = paymentMethodOf(ctx);
  const { plugin: _named, ...fields } = ctx.body;
  const input = parsePluginInput(plugin, fields);
  return method === 'mpp' ? payByMpp(ctx, plugin, input) : payByCard(ctx, plugin, input);
}
