import type { AuthContext } from '#domain/auth/authenticate';
import { accountAccess, requireActiveSubscription } from '#domain/billing/entitlements';
import { SKILL_CATALOGUE, type skillGetRoutes, skillOperation, skillsContract, type SkillName } from '#contract/skills';
import { createHandler, type OperationContext, type Operations } from '#http/pipeline';
import { reply } from '#http/reply';
import { runSkill } from './call';
import { importFestivals, importVenues } from '#data/skills/finder-catalogues';
import { install, listForAgent, listSkills, loadInstanceCalls, rate, uninstall } from './marketplace';
import type { ChannelApp } from '#adapters/channels';
import type { whatsappVerificationRoute } from '#contract/channel-inbound';

/** A user calls any catalogue skill directly, with an active subscription (admins exempt). */
async function sessionCall(name: SkillName, auth: AuthContext, requestId: string, body: unknown) {
  requireActiveSubscription(await accountAccess(auth));
  return runSkill(name, { userId: auth.userId, requestId, now: new Date() }, body);
}

const skillEndpoints = Object.fromEntries(
  SKILL_CATALOGUE.map((s) => [skillOperation(s.name), (ctx: OperationContext) => sessionCall(s.name, ctx.auth!, ctx.requestId, ctx.body)]),
);

/**
 * The messaging apps' inbound handling (signature checks, the agent's answer) loads on the first
 * webhook, not on every cold start; the list is typed against the adapter's so no app is missed.
 */
const loadChannelInbound = () => import('#domain/chat/channel-inbound');
const inboundApps = { telegram: true, discord: true, whatsapp: true, slack: true } satisfies Record<ChannelApp, true>;

/** The messaging apps' inbound routes (contract/channel-inbound.ts), `channelInboundTelegram`…. */
const channelInbound = Object.fromEntries(
  (Object.keys(inboundApps) as ChannelApp[]).map((app) => [
    `channelInbound${app[0]!.toUpperCase()}${app.slice(1)}`,
    async (ctx: OperationContext) => (await loadChannelInbound()).receiveInbound(app, (ctx.params as { hookId: string }).hookId, ctx.rawBody, ctx.headers),
  ]),
);

const channelVerification = {
  channelVerifyWhatsapp: async ({ params, query }: OperationContext<typeof whatsappVerificationRoute>) =>
    reply.text(200, await (await loadChannelInbound()).verifyWhatsappSubscription(params.hookId, query), { 'content-type': 'text/plain; charset=utf-8' }),
};

/** GET carries the read-only actions' fields in the query; the simulation's booking is given flat. */
function bookingSettlementGet({ auth, requestId, query }: OperationContext<(typeof skillGetRoutes)[0]>) {
  const { guarantee, backend, deposit, ...rest } = query;
  const flat = guarantee !== undefined || backend !== undefined || deposit !== undefined;
  return sessionCall('booking-settlement', auth, requestId, { ...rest, ...(flat ? { booking: { guarantee, backend, deposit } } : {}) });
}

const instantSplitGet = ({ auth, requestId, query }: OperationContext<(typeof skillGetRoutes)[1]>) => sessionCall('instant-split', auth, requestId, query);

// The per-skill routes are generated from the catalogue, so the group's operations are keyed by string.
const operations = {
  ...skillEndpoints,
  ...channelInbound,
  ...channelVerification,
  skillBookingSettlementGet: bookingSettlementGet,
  skillInstantSplitGet: instantSplitGet,
  listSkills: ({ query }) => listSkills(query),
  installSkill: ({ auth, body }) => install(auth, body),
  listInstalledSkills: ({ auth, params }) => listForAgent(auth, params.agentId),
  uninstallSkill: ({ auth, params }) => uninstall(auth, params.agentId, params.skillId),
  rateSkill: ({ auth, params, body }) => rate(auth, params.skillId, body.rating),
  importVenues: async ({ body }) => ({ success: true, ...(await importVenues(body.venues, body.replace)) }),
  importFestivals: async ({ body }) => ({ success: true, ...(await importFestivals(body.festivals, body.replace)) }),
  runtimeSkillCall: async ({ params, requestId, body }) => (await loadInstanceCalls()).runtimeCall(params, requestId, body),
} as Operations<typeof skillsContract>;

export const handler = createHandler(skillsContract, operations, {
  // Loaded with the runtime's skill calls, so the other skill routes never load the token store.
  runtimeAuthenticator: async (userId, authorization) => (await loadInstanceCalls()).authenticateRuntime(userId, authorization),
});
