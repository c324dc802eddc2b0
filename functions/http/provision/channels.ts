import { createHash, timingSafeEqual } from 'node:crypto';
import type * as z from 'zod/mini';
import { streaming } from '#adapters/streaming';
import type { AuthContext } from '#domain/auth/authenticate';
import { accountAccess, type AccountAccess } from '#domain/billing/entitlements';
import { DEFAULT_AGENT_MODEL, type AgentConfig } from '#contract/agents';
import type { AiProvider, ProvisionChannelsBody } from '#contract/provision';
import { encrypt } from '#platform/crypto/envelope';
import { newAgentId } from '#data/agents';
import { instanceUrl, subdomainFor } from '#data/instances';
import { channelProvisionItem } from '#data/channel-provisions';
import { paymentRequired } from '#platform/errors';
import { provisionFor } from '#domain/agents/provision';

type Body = z.infer<ReturnType<typeof ProvisionChannelsBody>>;
type Provider = z.infer<ReturnType<typeof AiProvider>>;

/** The model each AI provider choice starts with (`<vendor>/<model>`; the aggregator serves every vendor). */
const PROVIDER_MODELS: Record<Provider, { model: string; baseUrl: string }> = {
  openrouter: { model: DEFAULT_AGENT_MODEL, baseUrl: 'https://openrouter.ai/api/v1' },
  openai: { model: 'openai/gpt-4o-mini', baseUrl: 'https://api.openai.com/v1' },
  anthropic: { model: 'anthropic/claude-3-5-haiku', baseUrl: 'https://api.anthropic.com/v1' },
  google: { model: 'google/gemini-2.0-flash', baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai' },
  mistral: { model: 'mistral/mistral-small', baseUrl: 'https://api.mistral.ai/v1' },
};

const paymentNeeded = (why: string) => paymentRequired(why, 'PAYMENT_REQUIRED');

const sameSecret = (a: string, b: string) => timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

/**
 * A paying account: its STORED subscription must be active, be the one `cardSubscriptionId`
 * names, and be for the plan the body names. Nothing in the body or headers grants anything.
 */
function requirePaid(access: AccountAccess, body: Body): void {
  if (!body.cardSubscriptionId) throw paymentNeeded('cardSubscriptionId is required: an active card subscription pays for the agent');
  const stored = access.subscriptionActive ? access.subscriptionId : undefined;
  if (!stored || !sameSecret(stored, body.cardSubscriptionId)) throw paymentNeeded('no active subscription of this account matches cardSubscriptionId');
  if (access.plan !== body.plan) throw paymentNeeded(`the subscription is for the ${access.plan} plan, not ${body.plan}`);
}

/**
 * The one answer to every unauthenticated call, whatever the body names: the email and the
 * subscription id are no secrets, so they can neither choose an account nor tell which exist.
 */
const SIGN_IN_TO_PROVISION = 'sign in (session or API key) to provision an agent with your own active subscription';

/**
 * The agent joins the caller's own account; admins and testers (an authenticated, verified
 * account) skip the payment check, everyone else pays with the account's stored subscription.
 */
async function payingAccount(auth: AuthContext, body: Body) {
  const access = await accountAccess(auth);
  if (!auth.isAdmin && !auth.isTester) requirePaid(access, body);
  return { owner: { userId: auth.userId, email: auth.email }, access };
}

const CHANNELS = ['chatBot', 'communityBot', 'businessMessaging'] as const;

export async function provisionWithChannels(auth: AuthContext | undefined, body: Body) {
  if (!auth) throw paymentNeeded(SIGN_IN_TO_PROVISION);
  if (!body.plan || body.plan === 'free') throw paymentNeeded('a paid plan is required: the free plan no longer includes agents');
  const { owner, access } = await payingAccount(auth, body);
  const userId = owner.userId;
  const tokens = { chatBot: body.chatBotToken, communityBot: body.communityBotToken, businessMessaging: body.businessMessagingToken };
  const enabled = Object.fromEntries(CHANNELS.map((c) => [c, tokens[c] !== undefined])) as Record<(typeof CHANNELS)[number], boolean>;
  const provider = PROVIDER_MODELS[body.aiProvider];
  const agentId = newAgentId();
  const stream = await streaming().createLiveStream({ userId, agentId });
  const seal = (secret: string, purpose: string) => encrypt(secret, { userId, purpose });

  const channelTokens: Record<string, unknown> = {};
  for (const c of CHANNELS) if (tokens[c] !== undefined) channelTokens[c] = await seal(tokens[c]!, 'channel-token');
  const record = {
    agentId,
    plan: body.plan,
    aiProvider: body.aiProvider,
    aiProviderConfig: { model: provider.model, baseUrl: provider.baseUrl, requiresKey: body.aiProvider !== 'openrouter' },
    apiKey: body.apiKey === undefined ? null : await seal(body.apiKey, 'ai-provider-key'),
    channelTokens,
    chatBotUserId: body.chatBotUserId ?? null,
    channels: Object.fromEntries(CHANNELS.map((c) => [c, enabled[c] ? 'enabled' : 'disabled'])),
    streaming: {
      provider: stream.provider,
      liveStreamId: stream.liveStreamId,
      streamKey: await seal(stream.streamKey, 'stream-key'),
      rtmpServer: stream.rtmpServer,
      playbackUrl: stream.playbackUrl,
      hlsPlaylistUrl: stream.hlsPlaylistUrl,
      lowLatency: stream.lowLatency,
      resolution: stream.resolution,
      bitrate: stream.bitrate,
    },
    createdAt: new Date().toISOString(),
  };
  const config: AgentConfig = { model: provider.model, channels: enabled };
  const name = `${CHANNELS.filter((c) => enabled[c]).join(' + ')} agent`;
  await provisionFor(
    owner,
    access.agentLimit,
    { name, model: provider.model, config, source: 'channels' },
    { id: agentId, also: [channelProvisionItem(userId, record)] },
  );
  return {
    success: true as const,
    userId,
    subdomain: subdomainFor(userId),
    url: instanceUrl(userId),
    streamKey: stream.streamKey,
    liveStreamId: stream.liveStreamId,
  };
}
