import * as z from 'zod/mini';
import { aiConfig, localModelConfig } from '#platform/config';

/**
 * The model catalogue: the versioned list of models the platform offers (spec 2.14), which plan
 * may use each (spec 2.16), and the spending rule's figures. Prices are USD per million tokens.
 * An operator replaces the whole document with the AI_CATALOGUE setting (same shape, validated at
 * cold start); everything else (plans, routes, metering) reads it from here.
 */

export const PLAN_ORDER = ['label', 'solo', 'collective', 'network'] as const;
export type CataloguePlan = (typeof PLAN_ORDER)[number];

const text = () => z.string().check(z.minLength(1));
const positiveInt = () => z.int().check(z.positive());

const catalogueModel = () =>
  z.strictObject({
    id: z.string().check(z.regex(/^[a-z0-9][a-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'must be <vendor>/<model>')),
    name: text(),
    description: z.string(),
    tags: z.array(text()),
    /** USD per million input (prompt) tokens. */
    inputCost: z.number().check(z.nonnegative()),
    /** USD per million output (completion) tokens. */
    outputCost: z.number().check(z.nonnegative()),
    contextWindow: positiveInt(),
    /** Largest completion the model produces; `max_tokens` is capped to it. */
    maxOutputTokens: positiveInt(),
    /** The lowest plan that may use the model; every higher plan may too. */
    minPlan: z.enum(PLAN_ORDER),
    /** The vendor's own model id, for a direct provider (the aggregator takes `id` itself). */
    vendorModelId: text(),
    /**
     * The platform's fallback chain, in order: the models a call moves to when this one fails before
     * its first token (an agent's `fallbackModels` replaces it). Models outside the caller's plan are skipped.
     */
    fallbacks: z.optional(z.array(text())),
  });
export type CatalogueModel = z.infer<ReturnType<typeof catalogueModel>>;

/** Built only when an operator sets AI_CATALOGUE: every other cold start uses DEFAULT_CATALOGUE as it is. */
const catalogueSchema = () =>
  z.strictObject({
    version: text(),
    /** USD value of one credit of the ledger. */
    creditUsd: z.number().check(z.positive()),
    /** Model spend included in each plan per billing period, in credits, before the balance is used. */
    includedCredits: z.record(z.enum(PLAN_ORDER), z.int().check(z.nonnegative())),
    /** Task type → the tag a model needs to serve it (POST /api/ai/models/select, chat auto-selection). */
    taskTags: z.record(z.string().check(z.regex(/^[a-z0-9_-]+$/)), text()),
    models: z.array(catalogueModel()).check(z.minLength(1)),
    /**
     * Image generation models (the visual-synthesizer skill), priced and gated like chat models: costs
     * per million input (prompt) and output (image) tokens, `maxOutputTokens` the most one image costs.
     * Apart from `models`, so chat never picks one.
     */
    imageModels: z._default(z.array(catalogueModel()), []),
  });
export type Catalogue = z.infer<ReturnType<typeof catalogueSchema>>;

export const DEFAULT_CATALOGUE: Catalogue = {
  version: '2026-11-01',
  creditUsd: 0.001,
  includedCredits: { label: 2_000, solo: 6_000, collective: 15_000, network: 40_000 },
  taskTags: { general: 'general', fast: 'fast', code: 'code', coding: 'code', reasoning: 'reasoning', 'long-context': 'long-context' },
  models: [
    {
      id: 'openai/gpt-4o-mini',
      name: 'GPT-4o mini',
      description: 'Small general model: cheap everyday chat, drafting and summaries.',
      tags: ['general', 'small', 'code'],
      inputCost: 0.15,
      outputCost: 0.6,
      contextWindow: 128_000,
      maxOutputTokens: 16_384,
      minPlan: 'label',
      vendorModelId: 'gpt-4o-mini',
      fallbacks: ['google/gemini-2.0-flash', 'anthropic/claude-3-5-haiku', 'mistral/mistral-small'],
    },
    {
      id: 'google/gemini-2.0-flash',
      name: 'Gemini 2.0 Flash',
      description: 'Fast model with a long context: quick answers and high volume.',
      tags: ['fast', 'general', 'long-context'],
      inputCost: 0.1,
      outputCost: 0.4,
      contextWindow: 1_048_576,
      maxOutputTokens: 8_192,
      minPlan: 'label',
      vendorModelId: 'gemini-2.0-flash',
      fallbacks: ['openai/gpt-4o-mini', 'anthropic/claude-3-5-haiku'],
    },
    {
      id: 'anthropic/claude-3-5-haiku',
      name: 'Claude 3.5 Haiku',
      description: 'Fast, capable assistant model with tool use.',
      tags: ['fast', 'general', 'code'],
      inputCost: 0.8,
      outputCost: 4,
      contextWindow: 200_000,
      maxOutputTokens: 8_192,
      minPlan: 'solo',
      vendorModelId: 'claude-3-5-haiku-latest',
      fallbacks: ['openai/gpt-4o-mini', 'google/gemini-2.0-flash'],
    },
    {
      id: 'mistral/mistral-small',
      name: 'Mistral Small',
      description: 'Efficient open-weight general model.',
      tags: ['general', 'fast'],
      inputCost: 0.1,
      outputCost: 0.3,
      contextWindow: 32_000,
      maxOutputTokens: 8_192,
      minPlan: 'solo',
      vendorModelId: 'mistral-small-latest',
      fallbacks: ['openai/gpt-4o-mini', 'google/gemini-2.0-flash'],
    },
    {
      id: 'openai/gpt-4o',
      name: 'GPT-4o',
      description: 'Flagship multimodal general model.',
      tags: ['general', 'code', 'reasoning'],
      inputCost: 2.5,
      outputCost: 10,
      contextWindow: 128_000,
      maxOutputTokens: 16_384,
      minPlan: 'collective',
      vendorModelId: 'gpt-4o',
      fallbacks: ['anthropic/claude-3-7-sonnet', 'openai/gpt-4o-mini'],
    },
    {
      id: 'anthropic/claude-3-7-sonnet',
      name: 'Claude 3.7 Sonnet',
      description: 'Strong coding and reasoning model with a long context.',
      tags: ['code', 'reasoning', 'long-context', 'general'],
      inputCost: 3,
      outputCost: 15,
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      minPlan: 'collective',
      vendorModelId: 'claude-3-7-sonnet-latest',
      fallbacks: ['openai/gpt-4o', 'anthropic/claude-3-5-haiku'],
    },
    {
      id: 'anthropic/claude-opus-4',
      name: 'Claude Opus 4',
      description: 'Most capable model for long, hard reasoning and agentic work.',
      tags: ['reasoning', 'code', 'long-context'],
      inputCost: 15,
      outputCost: 75,
      contextWindow: 200_000,
      maxOutputTokens: 32_000,
      minPlan: 'network',
      vendorModelId: 'claude-opus-4-0',
      fallbacks: ['google/gemini-2.5-pro', 'anthropic/claude-3-7-sonnet'],
    },
    {
      id: 'google/gemini-2.5-pro',
      name: 'Gemini 2.5 Pro',
      description: 'Reasoning model with a million-token context.',
      tags: ['reasoning', 'long-context', 'code'],
      inputCost: 1.25,
      outputCost: 10,
      contextWindow: 1_048_576,
      maxOutputTokens: 65_536,
      minPlan: 'network',
      vendorModelId: 'gemini-2.5-pro',
      fallbacks: ['anthropic/claude-opus-4', 'openai/gpt-4o'],
    },
    {
      id: 'meta/llama-3.3-70b',
      name: 'Llama 3.3 70B',
      description: 'Open-weight general model.',
      tags: ['general', 'code'],
      inputCost: 0.13,
      outputCost: 0.4,
      contextWindow: 131_072,
      maxOutputTokens: 8_192,
      minPlan: 'network',
      vendorModelId: 'llama-3.3-70b-instruct',
      fallbacks: ['openai/gpt-4o-mini', 'mistral/mistral-small'],
    },
  ],
  imageModels: [
    {
      id: 'openai/gpt-image-1',
      name: 'GPT Image 1',
      description: 'Images from a text prompt.',
      tags: ['image'],
      inputCost: 5,
      outputCost: 40,
      contextWindow: 32_000,
      // A high-quality 1024x1024 image.
      maxOutputTokens: 4_160,
      minPlan: 'label',
      vendorModelId: 'gpt-image-1',
    },
  ],
};

/** The vendor of the local stack's keyless models (never in AWS: platform/config.ts refuses them there). */
export const LOCAL_VENDOR = 'local';
export const BUILTIN_MODEL_ID = 'local/builtin';

/** Every task type's tag: a local model is the one model of the stack, so it serves them all. */
const everyTag = (c: Catalogue) => [...new Set(Object.values(c.taskTags))];

/** A local model costs the platform nothing: it is metered in tokens and charged no credit. */
const localModel = (c: Catalogue, fields: Pick<CatalogueModel, 'id' | 'name' | 'description' | 'vendorModelId'>): CatalogueModel => ({
  ...fields,
  tags: everyTag(c),
  inputCost: 0,
  outputCost: 0,
  contextWindow: 131_072,
  maxOutputTokens: 4_096,
  minPlan: 'label',
  fallbacks: [],
});

/** A server's model id as a catalogue id: `local/<id>`, any character the id pattern refuses as `-`. */
export const localModelId = (serverModelId: string) => `${LOCAL_VENDOR}/${serverModelId.replace(/[^A-Za-z0-9._:-]/g, '-').replace(/^[^A-Za-z0-9]+/, '')}`;

/** The local stack's models, after the catalogue's: the model server's found at start, else the built-in one. */
function localModels(c: Catalogue): CatalogueModel[] {
  const local = localModelConfig();
  const out = (local.server?.models ?? []).map((id) =>
    localModel(c, {
      id: localModelId(id),
      name: `${id} (local model server)`,
      description: `Served by the model server at ${local.server!.baseUrl}, found when the local stack started.`,
      vendorModelId: id,
    }),
  );
  if (local.builtin)
    out.push(
      localModel(c, {
        id: BUILTIN_MODEL_ID,
        name: 'Built-in local model',
        description:
          "The local stack's stand-in when no provider is set: it answers deterministically from the conversation, in pieces, and is no language model.",
        vendorModelId: 'builtin',
      }),
    );
  return out;
}

let cached: { source: string | undefined; local: string; catalogue: Catalogue } | undefined;

/** The catalogue in force: the operator's AI_CATALOGUE, else the versioned file; then the local stack's models. */
export function catalogue(): Catalogue {
  const source = aiConfig().catalogueJson;
  const local = localModelConfig();
  const localKey = JSON.stringify([local.server, local.builtin]);
  if (cached && cached.source === source && cached.local === localKey) return cached.catalogue;
  let parsed = DEFAULT_CATALOGUE;
  if (source) {
    let raw: unknown;
    try {
      raw = JSON.parse(source);
    } catch {
      throw new Error('AI_CATALOGUE must be JSON');
    }
    const out = z.safeParse(catalogueSchema(), raw);
    if (!out.success) throw new Error(`AI_CATALOGUE: ${out.error.issues[0]?.path.join('.')} ${out.error.issues[0]?.message}`);
    parsed = out.data;
  }
  const extra = localModels(parsed).filter((m) => !parsed.models.some((x) => x.id === m.id));
  if (extra.length) parsed = { ...parsed, models: [...parsed.models, ...extra] };
  cached = { source, local: localKey, catalogue: parsed };
  return parsed;
}

export const vendorOf = (modelId: string) => modelId.slice(0, modelId.indexOf('/'));

export const isLocalModel = (modelId: string) => vendorOf(modelId) === LOCAL_VENDOR;

export const findModel = (modelId: string) => catalogue().models.find((m) => m.id === modelId);

/** The platform's fallback chain of a model: its catalogue `fallbacks` that are catalogue models, itself left out. */
export const defaultFallbacks = (modelId: string): string[] =>
  (findModel(modelId)?.fallbacks ?? []).filter((id) => id !== modelId && findModel(id) !== undefined);

const rank = (plan: CataloguePlan) => PLAN_ORDER.indexOf(plan);

export const findImageModel = (modelId: string) => catalogue().imageModels.find((m) => m.id === modelId);

/** Whether a plan (admins: `network`) reaches a model's `minPlan`. */
export const planReaches = (plan: CataloguePlan, model: Pick<CatalogueModel, 'minPlan'>) => rank(model.minPlan) <= rank(plan);

/** Model ids a plan may use (admins: `network`); none without a recognised plan. */
export function modelsForPlan(plan: string | null | undefined): string[] {
  if (!plan || !(PLAN_ORDER as readonly string[]).includes(plan)) return [];
  const r = rank(plan as CataloguePlan);
  return catalogue()
    .models.filter((m) => rank(m.minPlan) <= r)
    .map((m) => m.id);
}

export const allModelIds = () => catalogue().models.map((m) => m.id);

/** Cost in USD of a call at catalogue prices. */
export function costUsd(model: Pick<CatalogueModel, 'inputCost' | 'outputCost'>, inputTokens: number, outputTokens: number): number {
  return (inputTokens * model.inputCost + outputTokens * model.outputCost) / 1_000_000;
}

/** Credits a cost is charged as: rounded up, so a paid call never costs nothing. */
export const creditsFor = (usd: number) => (usd <= 0 ? 0 : Math.ceil(usd / catalogue().creditUsd - 1e-9));
