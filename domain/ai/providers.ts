import type { LanguageModel } from 'ai';
import { aiConfig, localModelConfig, modelConfig } from '#platform/config';
import { BUILTIN_MODEL_ID, LOCAL_VENDOR, vendorOf, type CatalogueModel } from '#domain/models/catalogue';
import type { OpenAIWire } from './openai-wire';

/**
 * Which provider serves a catalogue model, through the AI SDK. A direct provider of the model's
 * vendor wins over the OpenAI-compatible aggregator (MODEL_API_BASE_URL), which serves every
 * catalogue model by its `<vendor>/<model>` id. A user's own key (BYOK) for the vendor, or for the
 * aggregator, is used for that user's calls instead of the platform's.
 */

/** The names `GET /api/ai/health` reports. */
export const AGGREGATOR = 'openai-compatible';
const DIRECT_VENDORS = ['openai', 'anthropic', 'google'] as const;
type DirectVendor = (typeof DIRECT_VENDORS)[number];

/** Vendor APIs a BYOK key may reach directly; mistral's API speaks the OpenAI wire format. */
const DEFAULT_BASE_URLS: Record<DirectVendor | 'mistral' | 'openrouter', string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
  google: 'https://generativelanguage.googleapis.com/v1beta',
  mistral: 'https://api.mistral.ai/v1',
  openrouter: 'https://openrouter.ai/api/v1',
};

/** The local stack's connections: a model server found on loopback at start, and the built-in model. */
export const LOCAL_SERVER = 'local-server';
export const BUILTIN = 'builtin';

export interface Connection {
  /** `openai`, `anthropic`, `google`, `mistral`, the aggregator, or the local stack's. */
  name: string;
  kind: DirectVendor | 'compatible' | 'builtin';
  baseUrl: string;
  apiKey: string | undefined;
  /** The user's own key: the call costs the platform nothing and no credits. */
  byok: boolean;
}

const directSettings = (vendor: DirectVendor) => aiConfig()[vendor];

/** The platform's own connections that are configured, by name. */
export function platformConnections(): Connection[] {
  const out: Connection[] = [];
  for (const vendor of DIRECT_VENDORS) {
    const s = directSettings(vendor);
    if (s.apiKey) out.push({ name: vendor, kind: vendor, baseUrl: s.baseUrl ?? DEFAULT_BASE_URLS[vendor], apiKey: s.apiKey, byok: false });
  }
  const { baseUrl, apiKey } = modelConfig();
  if (baseUrl) out.push({ name: AGGREGATOR, kind: 'compatible', baseUrl, apiKey, byok: false });
  return out;
}

/** The connection that serves a model for a caller with these BYOK keys; undefined when none can. */
export function connectionFor(model: Pick<CatalogueModel, 'id'>, userKeys: Record<string, string> = {}): Connection | undefined {
  const vendor = vendorOf(model.id);
  if (vendor === LOCAL_VENDOR) return localConnection(model.id);
  const own = userKeys[vendor];
  if (own) {
    if ((DIRECT_VENDORS as readonly string[]).includes(vendor)) {
      const v = vendor as DirectVendor;
      return { name: v, kind: v, baseUrl: directSettings(v).baseUrl ?? DEFAULT_BASE_URLS[v], apiKey: own, byok: true };
    }
    if (vendor === 'mistral') return { name: 'mistral', kind: 'compatible', baseUrl: DEFAULT_BASE_URLS.mistral, apiKey: own, byok: true };
  }
  const platform = platformConnections();
  const direct = platform.find((c) => c.name === vendor);
  if (userKeys.openrouter) {
    if (direct) return direct;
    return { name: AGGREGATOR, kind: 'compatible', baseUrl: modelConfig().baseUrl ?? DEFAULT_BASE_URLS.openrouter, apiKey: userKeys.openrouter, byok: true };
  }
  return direct ?? platform.find((c) => c.kind === 'compatible');
}

/** A local model's connection: only the local stack's own (no aggregator or user key serves `local/…`). */
function localConnection(modelId: string): Connection | undefined {
  const local = localModelConfig();
  if (modelId === BUILTIN_MODEL_ID) return local.builtin ? { name: BUILTIN, kind: 'builtin', baseUrl: 'builtin:', apiKey: undefined, byok: false } : undefined;
  return local.server ? { name: LOCAL_SERVER, kind: 'compatible', baseUrl: local.server.baseUrl, apiKey: undefined, byok: false } : undefined;
}

/**
 * The AI SDK language model for a catalogue model over a connection. Each vendor's provider code is
 * imported on the first call to that vendor, so a container that only serves one vendor never
 * evaluates the others' (a vendor's provider code is large: docs/architecture.md §11).
 */
export async function languageModel(model: Pick<CatalogueModel, 'id' | 'vendorModelId'>, c: Connection): Promise<LanguageModel> {
  switch (c.kind) {
    case 'openai':
      return (await import('./openai-wire')).openAIWire({ baseURL: c.baseUrl, apiKey: c.apiKey }).chat(model.vendorModelId);
    case 'anthropic':
      return (await import('./vendors/anthropic')).anthropicModel(model.vendorModelId, c.baseUrl, c.apiKey);
    case 'google':
      return (await import('./vendors/google')).googleModel(model.vendorModelId, c.baseUrl, c.apiKey);
    case 'compatible':
      // The aggregator serves catalogue ids; every other server knows its models by its own ids.
      return (await import('./vendors/compatible')).compatibleChatModel(c.name === AGGREGATOR ? model.id : model.vendorModelId, c);
    case 'builtin':
      return (await import('./vendors/builtin')).builtinModel(model.id);
  }
}

/**
 * The OpenAI-wire provider for speech (tts) and transcription (stt): the platform's OpenAI key when
 * set, else the aggregator. Undefined when neither is configured.
 */
export async function speechProvider(): Promise<{ name: string; provider: OpenAIWire } | undefined> {
  const c = platformConnections().find((x) => x.kind === 'openai') ?? platformConnections().find((x) => x.kind === 'compatible');
  if (!c) return undefined;
  const { openAIWire } = await import('./openai-wire');
  return { name: c.name, provider: openAIWire({ baseURL: c.baseUrl, apiKey: c.apiKey }) };
}

/** The cheap request that tells whether a connection answers: its model listing. */
export function probeRequest(c: Connection): { url: string; headers: Record<string, string> } {
  const base = c.baseUrl.replace(/\/+$/, '');
  switch (c.kind) {
    case 'anthropic':
      return { url: `${base}/models`, headers: { 'x-api-key': c.apiKey ?? '', 'anthropic-version': '2023-06-01' } };
    case 'google':
      return { url: `${base}/models`, headers: { 'x-goog-api-key': c.apiKey ?? '' } };
    default:
      return { url: `${base}/models`, headers: c.apiKey ? { authorization: `Bearer ${c.apiKey}` } : {} };
  }
}
