import * as z from 'zod/mini';
import { IsoDate, ResourceId } from './common';
import { lazySchema } from './route';

/**
 * Status values the spec shows (section 3). `active` appears only in the detail form of spec 2.4;
 * the platform treats it as a synonym of `running` (same transitions) and writes `running` itself.
 */
export const AgentStatus = lazySchema(() => z.enum(['provisioning', 'running', 'stopped', 'error', 'active']));

/** Message record of `GET /api/agents/{id}/messages` (the spec leaves it open, 2.17). */
export const AgentMessage = lazySchema(() =>
  z
    .object({
      id: z.string(),
      role: z.enum(['user', 'assistant', 'system']),
      content: z.string(),
      createdAt: IsoDate(),
    })
    .check(z.describe('One message the agent received (`user`) or sent (`assistant`), or a `system` notice.')),
);

export const VerificationType = lazySchema(() => z.enum(['eas', 'coinbase', 'ens', 'webauthn']));

export const AGENT_SYSTEM_PROMPT_MAX_CHARS = 8000;
export const AGENT_MAX_TOKENS_LIMIT = 32768;
export const AGENT_SKILLS_MAX = 100;
export const AGENT_ENV_MAX_ENTRIES = 50;

const ModelId = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(128), z.describe('model identifier of the form `<vendor>/<model>`')));
const EnvName = lazySchema(() => z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name')));

/**
 * Structure of an agent's `config` (the spec leaves it open, 2.17). Every field is optional: an
 * omitted field takes the platform default. Strict, so unknown fields are refused (docs/architecture.md §6).
 */
export const AgentConfig = lazySchema(() =>
  z
    .strictObject({
      systemPrompt: z
        .optional(z.string().check(z.maxLength(AGENT_SYSTEM_PROMPT_MAX_CHARS)))
        .check(z.describe(`at most ${AGENT_SYSTEM_PROMPT_MAX_CHARS} characters`)),
      temperature: z.optional(z.number().check(z.minimum(0), z.maximum(2))),
      maxTokens: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(AGENT_MAX_TOKENS_LIMIT))).check(z.describe('maximum tokens per model answer')),
      model: z.optional(ModelId()),
      fallbackModels: z
        .optional(
          z.array(ModelId()).check(
            z.maxLength(3),
            z.refine((ids) => new Set(ids).size === ids.length, 'fallback models must be unique'),
          ),
        )
        .check(
          z.describe(
            "the models tried in order when the agent's model fails before its first token (replaces the catalogue's chain; [] for none); each must be allowed by the plan (400 `FALLBACK_MODEL_NOT_ALLOWED`)",
          ),
        ),
      channels: z
        .optional(
          z.strictObject({
            chatBot: z.optional(z.boolean()),
            communityBot: z.optional(z.boolean()),
            businessMessaging: z.optional(z.boolean()),
          }),
        )
        .check(z.describe('which messaging channels the agent answers on')),
      skills: z
        .optional(
          z.array(ResourceId()).check(
            z.maxLength(AGENT_SKILLS_MAX),
            z.refine((ids) => new Set(ids).size === ids.length, 'skill ids must be unique'),
          ),
        )
        .check(z.describe(`installed skill ids (e.g. \`event-scheduler\`), at most ${AGENT_SKILLS_MAX}, no duplicates`)),
      env: z
        .optional(
          z
            .record(EnvName(), z.string().check(z.maxLength(4096)))
            .check(z.refine((env) => Object.keys(env).length <= AGENT_ENV_MAX_ENTRIES, `at most ${AGENT_ENV_MAX_ENTRIES} entries`)),
        )
        .check(z.describe(`environment variables handed to the agent runtime, at most ${AGENT_ENV_MAX_ENTRIES} entries`)),
    })
    .check(z.describe('Agent configuration; every field optional, omitted fields take the platform default.')),
);
export type AgentConfig = z.infer<ReturnType<typeof AgentConfig>>;
