import type { ModelMessage, ToolSet } from 'ai';
import * as z from 'zod/mini';
import type { AuthContext } from '#domain/auth/authenticate';
import {
  generateChat,
  MAX_STEPS,
  speechProvider,
  streamChat,
  textSdk,
  type ModelCallInput,
  type ModelCaller,
  type TextSdk,
  type TokenUsage,
} from '#domain/ai/model-layer';
import { modelConfig } from '#platform/config';
import type { GatewayPluginId } from '#contract/gateway';
import { MEMORY_VALUE_MAX_BYTES } from '#contract/memory';
import { getAgent } from '#data/agents';
import { installedSkillRecords } from '#data/installed-skills';
import { AgentNotFoundError, readAgentMemory, writeAgentMemory } from '#data/memory';
import { DomainError, invalid } from '#platform/errors';
import { lazySchema } from '#contract/lazy-schema';

/** Who a plugin serves: an account (card) or an anonymous on-chain payer (MPP), which gets account-free tools only. */
export type PluginCaller = { kind: 'account'; auth: AuthContext } | { kind: 'payer'; payer: string; reference: string };

export interface PluginAnswer {
  message: string;
  /** Plugin-specific fields beside `message` (the base64 audio of `tts`, the model and usage of text plugins). */
  extra?: Record<string, unknown>;
}

/** A plugin could not produce its answer; the gateway answers 500 `internal` with this code. */
export class PluginFailedError extends DomainError {
  declare readonly code: string;
  constructor(code: string, message: string) {
    super('internal', message, code);
  }
}

/** Audio limits (documented in the contract): text to speak, and the decoded audio to transcribe. */
export const TTS_MAX_CHARS = 4096;
export const STT_MAX_AUDIO_BYTES = 700 * 1024;
const TTS_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
const AUDIO_MEDIA_TYPES: Record<(typeof TTS_FORMATS)[number], string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

const Message = lazySchema(() =>
  z.strictObject({ role: z.enum(['user', 'assistant', 'system']), content: z.string().check(z.minLength(1), z.maxLength(200_000)) }),
);
const TextInput = lazySchema(() =>
  z
    .strictObject({
      prompt: z.optional(z.string().check(z.minLength(1), z.maxLength(200_000))),
      messages: z.optional(z.array(Message()).check(z.minLength(1), z.maxLength(200))),
      system: z.optional(z.string().check(z.maxLength(20_000))),
      model: z.optional(z.string().check(z.minLength(1), z.maxLength(128))),
      taskType: z.optional(z.string().check(z.minLength(1), z.maxLength(32))),
      temperature: z.optional(z.number().check(z.minimum(0), z.maximum(2))),
      top_p: z.optional(z.number().check(z.minimum(0), z.maximum(1))),
      maxTokens: z.optional(z.number().check(z.int(), z.positive(), z.maximum(1_000_000))),
      max_tokens: z.optional(z.number().check(z.int(), z.positive(), z.maximum(1_000_000))),
    })
    .check(z.refine((b) => !!b.prompt !== !!b.messages, 'send `prompt` or `messages` (one of them)')),
);
const AgentInput = lazySchema(() =>
  z.intersection(
    TextInput(),
    z.object({
      maxSteps: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_STEPS))),
      agentId: z
        .optional(z.string().check(z.minLength(1), z.maxLength(128)))
        .check(z.describe("one of the caller's agents: its memory and installed skills become tools")),
    }),
  ),
);
const TtsInput = lazySchema(() =>
  z.strictObject({
    input: z.string().check(z.minLength(1), z.maxLength(TTS_MAX_CHARS)),
    voice: z._default(z.string().check(z.minLength(1), z.maxLength(32)), 'alloy'),
    format: z._default(z.enum(TTS_FORMATS), 'mp3'),
    model: z._default(z.string().check(z.minLength(1), z.maxLength(64)), 'tts-1'),
    instructions: z.optional(z.string().check(z.maxLength(4096))),
  }),
);
const SttInput = lazySchema(() =>
  z.strictObject({
    audio: z.base64().check(z.maxLength(Math.ceil(STT_MAX_AUDIO_BYTES / 3) * 4, `at most ${STT_MAX_AUDIO_BYTES} bytes of audio`)),
    model: z._default(z.string().check(z.minLength(1), z.maxLength(64)), 'whisper-1'),
    language: z.optional(z.string().check(z.minLength(2), z.maxLength(8))),
  }),
);

/** The agent schema's strict text part refuses its own extra keys, so they are split off first. */
const agentShape = (body: Record<string, unknown>) => {
  const { maxSteps, agentId, ...text } = body;
  return { text, extra: { maxSteps, agentId } };
};

export type PluginInput =
  | { plugin: 'generate-text'; input: z.output<ReturnType<typeof TextInput>> }
  | { plugin: 'agent'; input: z.output<ReturnType<typeof TextInput>> & { maxSteps?: number; agentId?: string } }
  | { plugin: 'tts'; input: z.output<ReturnType<typeof TtsInput>> }
  | { plugin: 'stt'; input: z.output<ReturnType<typeof SttInput>> };

function parseWith<S extends z.ZodMiniType>(schema: S, body: unknown): z.output<S> {
  const out = schema.safeParse(body);
  if (!out.success) {
    const issues = out.error.issues.map((i) => ({ path: ['body', ...i.path.map(String)].join('.'), message: i.message }));
    throw invalid('invalid plugin input', 'VALIDATION_ERROR', { issues });
  }
  return out.data;
}

/** Checked before any payment is spent, so a bad request never costs the caller a payment. */
export function parsePluginInput(plugin: GatewayPluginId, body: Record<string, unknown>): PluginInput {
  switch (plugin) {
    case 'generate-text':
      return { plugin, input: parseWith(TextInput(), body) };
    case 'agent': {
      const { text, extra } = agentShape(body);
      const parsed = parseWith(AgentInput(), { ...parseWith(TextInput(), text), ...extra });
      return { plugin, input: parsed };
    }
    case 'tts':
      return { plugin, input: parseWith(TtsInput(), body) };
    case 'stt':
      return { plugin, input: parseWith(SttInput(), body) };
  }
}

export const isStreamingPlugin = (p: PluginInput): p is Extract<PluginInput, { plugin: 'generate-text' | 'agent' }> =>
  p.plugin === 'generate-text' || p.plugin === 'agent';

const modelCaller = (caller: PluginCaller): ModelCaller =>
  caller.kind === 'account'
    ? { kind: 'account', account: { userId: caller.auth.userId, isAdmin: caller.auth.isAdmin, isTester: caller.auth.isTester } }
    : { kind: 'prepaid', payerId: caller.payer, reference: caller.reference };

function messagesOf(input: z.output<ReturnType<typeof TextInput>>): ModelMessage[] {
  const conversation: ModelMessage[] = input.messages ?? [{ role: 'user', content: input.prompt! }];
  return input.system ? [{ role: 'system', content: input.system }, ...conversation] : conversation;
}

/** Tools every caller may use: nothing of any account. */
const accountFreeTools = ({ tool }: TextSdk): ToolSet => ({
  current_time: tool({
    description: 'The current date and time (UTC, ISO 8601).',
    inputSchema: z.object({}),
    execute: async () => ({ now: new Date().toISOString() }),
  }),
});

/**
 * An account's agent tools: the named agent's memory (read and write, in the caller's partition
 * only) and its installed skills. An agent that is not the caller's gives no tools but an error.
 */
function accountTools({ tool }: TextSdk, userId: string, agentId: string): ToolSet {
  return {
    read_agent_memory: tool({
      description: "Read the agent's whole key-value memory.",
      inputSchema: z.object({}),
      execute: async () => (await readAgentMemory(userId, agentId))?.memory ?? { error: 'no such agent' },
    }),
    write_agent_memory: tool({
      description: "Store one value in the agent's memory under a key.",
      inputSchema: z.object({ key: z.string().check(z.minLength(1), z.maxLength(256)), value: z.unknown() }),
      execute: async ({ key, value }) => {
        const encoded = JSON.stringify(value ?? null);
        const bytes = Buffer.byteLength(encoded, 'utf8');
        if (bytes > MEMORY_VALUE_MAX_BYTES) return { error: `the value is ${bytes} bytes; the limit is ${MEMORY_VALUE_MAX_BYTES}` };
        try {
          return { stored: key, updatedAt: await writeAgentMemory(userId, agentId, [{ key, encoded, bytes }]) };
        } catch (err) {
          if (err instanceof AgentNotFoundError) return { error: 'no such agent' };
          throw err;
        }
      },
    }),
    list_installed_skills: tool({
      description: 'The skills installed on the agent, with their settings.',
      inputSchema: z.object({}),
      execute: async () => installedSkillRecords(userId, agentId),
    }),
  };
}

async function agentToolsFor(caller: PluginCaller, agentId: string | undefined): Promise<ToolSet> {
  if (caller.kind !== 'account' || !agentId) return accountFreeTools(await textSdk());
  if (!(await getAgent(caller.auth.userId, agentId))) throw invalid('no such agent', 'AGENT_NOT_FOUND');
  const sdk = await textSdk();
  return { ...accountFreeTools(sdk), ...accountTools(sdk, caller.auth.userId, agentId) };
}

async function textCall(p: Extract<PluginInput, { plugin: 'generate-text' | 'agent' }>, caller: PluginCaller): Promise<ModelCallInput> {
  const i = p.input;
  const base: ModelCallInput = {
    caller: modelCaller(caller),
    messages: messagesOf(i),
    model: i.model,
    taskType: i.taskType,
    temperature: i.temperature,
    topP: i.top_p,
    maxTokens: i.maxTokens ?? i.max_tokens,
  };
  if (p.plugin === 'generate-text') return base;
  return { ...base, tools: await agentToolsFor(caller, p.input.agentId), maxSteps: p.input.maxSteps ?? 5 };
}

const usageExtra = (model: string, usage: TokenUsage, steps?: number) => ({ model, usage, ...(steps !== undefined ? { steps } : {}) });

async function speech() {
  const s = await speechProvider();
  if (!s) throw new PluginFailedError('SPEECH_NOT_CONFIGURED', 'no speech provider is configured (OPENAI_API_KEY or MODEL_API_BASE_URL)');
  return s.provider;
}

/** The AI SDK's speech calls, imported on the first tts or stt call of a container (domain/ai/sdk/speech.ts). */
const speechSdk = () => import('#domain/ai/sdk/speech');

const abortAfterModelTimeout = () => AbortSignal.timeout(modelConfig().timeoutMs);

/** Runs a plugin to its complete answer. */
export async function runPlugin(p: PluginInput, caller: PluginCaller): Promise<PluginAnswer> {
  switch (p.plugin) {
    case 'generate-text':
    case 'agent': {
      const out = await generateChat(await textCall(p, caller));
      return { message: out.text, extra: usageExtra(out.model, out.usage, p.plugin === 'agent' ? out.steps : undefined) };
    }
    case 'tts': {
      const { input, voice, format, model, instructions } = p.input;
      const provider = await speech();
      const { experimental_generateSpeech: generateSpeech } = await speechSdk();
      const out = await generateSpeech({
        model: provider.speech(model),
        text: input,
        voice,
        outputFormat: format,
        instructions,
        maxRetries: 0,
        abortSignal: abortAfterModelTimeout(),
      });
      return {
        message: `synthesized ${input.length} characters of speech`,
        extra: { audio: { base64: out.audio.base64, mediaType: AUDIO_MEDIA_TYPES[format], format } },
      };
    }
    case 'stt': {
      const { audio, model, language } = p.input;
      const bytes = Buffer.from(audio, 'base64');
      if (bytes.length > STT_MAX_AUDIO_BYTES) throw invalid(`at most ${STT_MAX_AUDIO_BYTES} bytes of audio`, 'AUDIO_TOO_LARGE');
      const provider = await speech();
      const { experimental_transcribe: transcribe } = await speechSdk();
      const out = await transcribe({
        model: provider.transcription(model),
        audio: bytes,
        ...(language ? { providerOptions: { openai: { language } } } : {}),
        maxRetries: 0,
        abortSignal: abortAfterModelTimeout(),
      });
      return { message: out.text, extra: { language: out.language ?? null, durationInSeconds: out.durationInSeconds ?? null } };
    }
  }
}

/** A text plugin as a stream of text deltas, then its final answer. */
export async function streamPlugin(p: Extract<PluginInput, { plugin: 'generate-text' | 'agent' }>, caller: PluginCaller) {
  const stream = await streamChat(await textCall(p, caller));
  return {
    textStream: stream.textStream,
    answer: stream.result.then(
      (r) => ({ message: r.text, extra: usageExtra(r.model, r.usage, p.plugin === 'agent' ? r.steps : undefined) }) satisfies PluginAnswer,
    ),
  };
}
