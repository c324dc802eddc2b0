import * as z from 'zod/mini';
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { contract, type ContractRoute } from '#contract';
import type { TestSession } from '../helpers/api';

/**
 * How the generic suites fill a route's path and query: ids default to fresh random ones (which
 * nobody owns), `{userId}` to the caller's own id. Groups whose routes need a resource that
 * exists register an owner-side factory in `ownedResources`, so the cross-tenant suite can point
 * another user at it.
 */
export function fillPath(route: ContractRoute, values: Record<string, string>): string {
  return route.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(values[name] ?? `r${randomUUID().slice(0, 8)}`));
}

export function defaultQuery(route: ContractRoute, values: Record<string, string> = {}): string {
  const shape = route.query?.()._zod.def.shape ?? {};
  const q = new URLSearchParams();
  for (const [name, schema] of Object.entries(shape)) {
    if (values[name] !== undefined) q.set(name, values[name]!);
    else if (!z.safeParse(schema, undefined).success) q.set(name, name.toLowerCase().endsWith('id') ? `r${randomUUID().slice(0, 8)}` : 'x');
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const hasBody = (r: ContractRoute) => r.body !== undefined && r.bodyHandling?.kind !== 'raw';

/**
 * Resources a user owns, created through the real API by the owner, keyed by path or query
 * parameter name. A group's factory is added here when its routes are built.
 */
export type OwnedResourceFactory = (owner: TestSession) => Promise<Record<string, string>>;
export const ownedResources: Record<string, OwnedResourceFactory> = {};

// --- memory and keys ---
import * as dbKeys from '#data/keys';
import { tenant } from '#data/tenant';
import { call } from '../helpers/api';

/** A minimal agent item in the owner's partition: what memory ownership checks for. */
export async function putTestAgent(userId: string, agentId = `agt_${randomUUID().replaceAll('-', '')}`): Promise<string> {
  await tenant(userId).put({ ...dbKeys.agent(userId, agentId), agentId, name: 'test agent', status: 'running', createdAt: new Date().toISOString() });
  return agentId;
}

/** A running instance record for the account, as a settled launch leaves it (no runtime behind it). */
export async function putRunningInstance(userId: string, at = new Date()) {
  await tenant(userId).put({
    ...dbKeys.instance(userId),
    userId,
    status: 'running',
    generation: 1,
    op: 'launch',
    subdomain: 'agent-test',
    ownerEmail: `${userId}@example.com`,
    image: 'local',
    runtimeVersion: '1',
    readyAgents: 0,
    createdAt: at.toISOString(),
    updatedAt: at.toISOString(),
  });
}

ownedResources.memory = async (owner) => ({ agentId: await putTestAgent(owner.userId) });

ownedResources.keys = async (owner) => {
  const res = await call('POST', '/api/keys', { body: { name: 'owned key' }, session: owner });
  if (res.status !== 201) throw new Error(`could not create an API key: ${res.status} ${res.text}`);
  return { id: res.body.id };
};

// --- agents ---
/** A real agent, provisioned through the API by its subscribed owner. */
ownedResources.agents = async (owner) => {
  await tenant(owner.userId).put({
    ...dbKeys.subscription(owner.userId),
    status: 'active',
    plan: 'solo',
    eventCreated: Date.now(),
    updatedAt: new Date().toISOString(),
  });
  const res = await call('POST', '/api/agents/provision', { body: { name: 'owned agent' }, session: owner });
  if (res.status !== 201) throw new Error(`could not provision an agent: ${res.status} ${res.text}`);
  // A schedule of the agent, for the schedule routes.
  const scheduled = await call('POST', `/api/agents/${res.body.agent.id}/schedules`, { body: { cron: '0 9 * * *', prompt: 'owned schedule' }, session: owner });
  if (scheduled.status !== 201) throw new Error(`could not schedule a prompt: ${scheduled.status} ${scheduled.text}`);
  return { id: res.body.agent.id, scheduleId: scheduled.body.schedule.id };
};

// --- metrics ---
/** A heartbeat sample in the owner's partition (samples are written only by the heartbeat), so there is data to leak. */
ownedResources.metrics = async (owner) => {
  const { recordSample } = await import('#data/metrics');
  await recordSample(owner.userId, {
    timestamp: new Date().toISOString(),
    cpu: 12.5,
    memory: 25,
    messages: 3,
    errors: 1,
    responseMsTotal: 90,
    reachable: true,
    healthy: true,
  });
  return {};
};

// --- agent chat and /api/agent ---
/** An agent with a chat session, so the intruder points at real ids of the owner's agent and session. */
ownedResources['agent-chat'] = async (owner) => {
  const agentId = await putTestAgent(owner.userId);
  const res = await call('POST', '/api/agent', { body: { action: 'create-session', agentId }, session: owner });
  if (res.status !== 201) throw new Error(`could not create a chat session: ${res.status} ${res.text}`);
  return { agentId, sessionId: res.body.session.id };
};

// --- provisioned live streams ---
/** A channel-provisioned agent of the owner with its stream record, so a cross-tenant read has a key to leak. */
ownedResources.provision = async (owner) => {
  const { encrypt } = await import('#platform/crypto/envelope');
  const id = await putTestAgent(owner.userId);
  const streamKey = `live_${randomUUID()}`;
  await tenant(owner.userId).put({
    ...dbKeys.channelProvision(owner.userId, id),
    agentId: id,
    createdAt: new Date().toISOString(),
    streaming: {
      provider: 'local',
      liveStreamId: `ls_${randomUUID().slice(0, 8)}`,
      streamKey: await encrypt(streamKey, { userId: owner.userId, purpose: 'stream-key' }),
      rtmpServer: 'rtmp://127.0.0.1/live',
      playbackUrl: 'http://127.0.0.1/ls/index.m3u8',
      hlsPlaylistUrl: 'http://127.0.0.1/ls/index.m3u8',
      lowLatency: true,
      resolution: '1080p',
      bitrate: '6000kbps',
    },
  });
  return { id, streamKey };
};

// --- skills ---
/**
 * The routes that name the agent in the body rather than the path: the skills routes (install,
 * dj-streaming) by `agentId`, the OpenAI-compatible chat by its model `agent/<agentId>`.
 */
export const namesAgentInBody = (route: ContractRoute) =>
  (route.group === 'skills' && typeof route.example === 'object' && route.example !== null && 'agentId' in route.example) ||
  route.operation === 'createOpenAiChatCompletion';

/** The route's example body, pointed at the owner's agent when it names one. */
export function withOwnedIds(route: ContractRoute, owned: Record<string, string>): unknown {
  if (!namesAgentInBody(route) || !owned.agentId) return route.example;
  if (route.operation === 'createOpenAiChatCompletion') return { ...(route.example as Record<string, unknown>), model: `agent/${owned.agentId}` };
  return { ...(route.example as Record<string, unknown>), agentId: owned.agentId };
}

// --- openai-compatible ---
/** An agent of the owner, named as the model `agent/<agentId>`. */
ownedResources['openai-compatible'] = async (owner) => ({ agentId: (await ownedResources.agents!(owner)).id! });

/** An active plan in the user's partition, as the card webhook stores it. */
async function subscribe(userId: string): Promise<void> {
  await tenant(userId).put({ ...dbKeys.subscription(userId), status: 'active', plan: 'solo', eventCreated: Date.now(), updatedAt: new Date().toISOString() });
}

/**
 * Set-up of the intruder per group: the skills routes answer 402 to a caller without a plan before
 * they look at the agent, so the intruder is a subscriber too and the agent check is what stops it.
 */
export const intruderSetup: Record<string, (intruder: TestSession) => Promise<void>> = {
  skills: (intruder) => subscribe(intruder.userId),
  // A subscriber, so the agent's owner, not the plan, is what refuses the call.
  'openai-compatible': (intruder) => subscribe(intruder.userId),
};

/**
 * A provisioned agent of the owner with a skill installed on it through the API, and an escrow of
 * the owner (booking-settlement) that `get` would read.
 */
ownedResources.skills = async (owner) => {
  const { id: agentId } = await ownedResources.agents!(owner);
  const res = await call('POST', '/api/skills', { body: { skillId: 'setlist-oracle', agentId }, session: owner });
  if (res.status !== 200) throw new Error(`could not install a skill: ${res.status} ${res.text}`);
  const bookingId = `bk${randomUUID().slice(0, 8)}`;
  await tenant(owner.userId).put({
    ...dbKeys.booking(owner.userId, bookingId),
    bookingId,
    status: 'pending',
    escrow: { guarantee: '1.000000', backend: '0.000000', deposit: '0.000000' },
    createdAt: new Date().toISOString(),
  });
  return { agentId: agentId!, skillId: 'setlist-oracle', bookingId, action: 'get' };
};

// --- account webhook endpoints (delivery log, enable/disable, redelivery) ---
/** An endpoint of the owner with one event on record for it, so redelivery and the log have real ids to leak. */
ownedResources.webhooks = async (owner) => {
  const res = await call('POST', '/api/webhooks/endpoints', { body: { url: 'http://127.0.0.1:9/owned-hook', events: ['instance.*'] }, session: owner });
  if (res.status !== 201) throw new Error(`could not register a webhook endpoint: ${res.status} ${res.text}`);
  const { recordAttemptOutcome } = await import('#data/webhook-deliveries');
  const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
  const event = { id: eventId, type: 'instance.running', timestamp: new Date().toISOString(), data: { userId: owner.userId }, accountId: owner.userId };
  await recordAttemptOutcome(
    { userId: owner.userId, endpointId: res.body.endpoint.id, eventId },
    { delivered: true, at: new Date(), step: 1, eventJson: JSON.stringify(event) },
  );
  return { id: res.body.endpoint.id, eventId };
};

/**
 * A route's error body as the platform's `{error, code, ...details}`, whatever shape its group speaks
 * (contract/route.ts `errorShape`): an OpenAI-shaped `{error: {message, type, code, param}}` is read
 * back with its code in upper case, so every suite checks every route against the same codes.
 */
export function platformErrorOf(route: ContractRoute, body: any): any {
  const shape = contract.find((g) => g.group === route.group)?.errorShape ?? 'platform';
  if (shape !== 'openai') return body;
  expect(body?.error, `${route.method} ${route.path} answers an OpenAI error object`).toMatchObject({
    message: expect.any(String),
    type: expect.any(String),
    code: expect.toSatisfy((c: unknown) => c === null || typeof c === 'string'),
    param: expect.toSatisfy((p: unknown) => p === null || typeof p === 'string'),
  });
  const { message, type: _type, param: _param, code, ...details } = body.error;
  return { ...details, error: message, ...(code ? { code: code.toUpperCase() } : {}) };
}
