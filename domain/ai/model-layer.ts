import type { LanguageModelUsage, ModelMessage, ToolSet } from 'ai';
import { modelConfig } from '#platform/config';
import { modelAccess, type AccountIdentity, type ModelAccess } from './access';
import { userProviderKeys } from './byok';
import { catalogue, costUsd, defaultFallbacks, findModel, isLocalModel, vendorOf, type CatalogueModel } from '#domain/models/catalogue';
import { admit, breakerIdOf, recordFailure, recordSuccess, type BreakerTicket } from './breaker';
import { noteServedBy } from './failover-events';
import { ModelRequestError, ModelRestrictedError, NoModelAvailableError, ProviderFailureError, UnknownModelError } from './errors';
import { billingPeriod, estimateCredits, recordPayerUsage, release, reserve, settle, type Reservation } from './metering';
import { connectionFor, languageModel, type Connection } from './providers';
import { modelCallSignature, watchAgentCall } from './loop-breaker';
import { outsideCallSignal } from '#platform/deadline';

/**
 * THE model layer: every model call of the platform (the AI routes, agent chat through the runtime,
 * the v1 gateway's plugins) comes through here. For an account it checks the plan from the stored
 * account, picks or checks the model, reserves the call's credits, calls the provider through the
 * AI SDK with a hard timeout, and meters tokens and cost per account, agent, model and day. A
 * pre-paid caller (the gateway's on-chain payer) has no plan gate and is metered under its payer id.
 */

export * from './errors';
export { speechProvider } from './providers';
export { generateImages, type ImageCallResult } from './images';
export { catalogue, findModel, modelsForPlan, type Catalogue, type CatalogueModel } from '#domain/models/catalogue';
export type { AccountIdentity } from './access';

/**
 * The AI SDK's text calls, imported on the first call that needs them in a container (node caches
 * the module). Each loader lives beside its callers: esbuild bundles the target of every `import()`
 * a function's code reaches, so the image skill (which imports ./images.ts) does not carry these,
 * nor the chat routes the gateway's speech calls (functions/http/gateway/plugins.ts).
 */
export type TextSdk = typeof import('./sdk/text');
export const textSdk = (): Promise<TextSdk> => import('./sdk/text');

export type ModelCaller =
  /** A platform account (session, API key, or its agent runtime's gateway token); `agentId` when an agent calls. */
  | { kind: 'account'; account: AccountIdentity; agentId?: string }
  /** Paid per call outside the platform's ledger (MPP): no plan gate, no credits; `reference` e.g. the transaction hash. */
  | { kind: 'prepaid'; payerId: string; reference?: string };

export interface ModelCallInput<TOOLS extends ToolSet = ToolSet> {
  caller: ModelCaller;
  messages: ModelMessage[];
  /** `<vendor>/<model>`; auto-selected from `taskType` (default `general`) when omitted. */
  model?: string;
  taskType?: string;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  /** AI SDK tools for multi-step calls (the gateway's `agent` plugin). */
  tools?: TOOLS;
  /** Step limit of a tool-calling loop; 1 without tools, at most MAX_STEPS. */
  maxSteps?: number;
  /**
   * Tools the caller runs itself (an OpenAI client's functions): the model's calls of them end the
   * call with `toolCalls`, one step, nothing executed here.
   */
  clientTools?: ClientTool[];
  /** Whether and which tool the model must call (`auto` by default). */
  toolChoice?: 'auto' | 'none' | 'required' | { toolName: string };
  /** Up to four sequences that end the answer where the provider supports them. */
  stopSequences?: string[];
  abortSignal?: AbortSignal;
  /** The agent's fallback chain (`config.fallbackModels`), replacing the catalogue's; `[]`: none. */
  fallbackModels?: readonly string[];
}

export interface ClientTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters?: Record<string, unknown>;
}

/** A call of a client tool the model made: `arguments` is its JSON text. */
export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: string;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ModelCallResult {
  id: string;
  model: string;
  /** The vendor of the model (`openai`, `anthropic`...), as the catalogue's `provider`. */
  provider: string;
  /** The connection that served it (a direct vendor API or the aggregator). */
  servedBy: string;
  /** Set when a fallback answered: the model asked for, which failed before its first token. */
  fallbackFrom?: string;
  text: string;
  finishReason: string;
  usage: TokenUsage;
  costUsd: number;
  creditsCharged: number;
  byok: boolean;
  steps: number;
  /** The assistant and tool messages the call produced, to continue a conversation. */
  responseMessages: ModelMessage[];
  /** The client tools the model called (`clientTools`), for the caller to run. */
  toolCalls: ToolCallRequest[];
}

export interface ModelStream {
  id: string;
  model: string;
  provider: string;
  /** Text deltas as the provider produces them. */
  textStream: AsyncIterable<string>;
  /** Set when a fallback answers: the model asked for. */
  fallbackFrom?: string;
  /** Settles once the stream has been read to its end (or abandoned), after metering. */
  result: Promise<ModelCallResult>;
}

export const MAX_STEPS = 20;
export const DEFAULT_TASK_TYPE = 'general';

/** A model's `available`: a configured provider can serve it. */
export const isAvailable = (model: Pick<CatalogueModel, 'id'>, userKeys?: Record<string, string>) => connectionFor(model, userKeys) !== undefined;

/**
 * The cheapest available model that serves a task type (its tag), among `allowed` when given.
 * Task types map to tags in the catalogue (`general`, `fast`, `code`, `reasoning`, `long-context`).
 */
export function selectModel(taskType: string = DEFAULT_TASK_TYPE, allowed?: readonly string[], userKeys?: Record<string, string>): CatalogueModel {
  const tag = catalogue().taskTags[taskType] ?? taskType;
  const candidates = catalogue()
    .models.filter((m) => m.tags.includes(tag) && (!allowed || allowed.includes(m.id)) && isAvailable(m, userKeys))
    // A local model costs nothing but is the last choice: any provider's model is a real one.
    .sort((a, b) => Number(isLocalModel(a.id)) - Number(isLocalModel(b.id)) || a.inputCost + a.outputCost - (b.inputCost + b.outputCost));
  if (!candidates[0]) throw new NoModelAvailableError(`no available model serves the task type ${taskType}`);
  return candidates[0];
}

/**
 * On the local stack, the model that answers for one no provider serves (an agent's default model
 * with nothing configured): the model server's first model, else the built-in one, within the plan.
 * None elsewhere: local models exist only there.
 */
function localStandIn(allowed?: readonly string[]): CatalogueModel | undefined {
  return catalogue().models.find((m) => isLocalModel(m.id) && (!allowed || allowed.includes(m.id)) && isAvailable(m));
}

export function estimateCost(modelId: string, inputTokens: number, outputTokens: number) {
  const model = findModel(modelId);
  if (!model) throw new UnknownModelError(modelId);
  return { model: model.id, inputTokens, outputTokens, estimatedCost: costUsd(model, inputTokens, outputTokens), currency: 'USD' as const };
}

/** A conservative token estimate of a prompt (about four characters a token, plus framing per message). */
export function estimatePromptTokens(messages: ModelMessage[]): number {
  return messages.reduce((sum, m) => sum + 4 + Math.ceil((typeof m.content === 'string' ? m.content.length : JSON.stringify(m.content).length) / 4), 0);
}

interface Prepared {
  model: CatalogueModel;
  connection: Connection;
  gate?: ModelAccess;
  reservation?: Reservation;
  settings: { temperature?: number; topP?: number; maxOutputTokens: number };
  fallbackFrom?: string;
}

const clamp = (v: number | undefined, min: number, max: number) => (v === undefined ? undefined : Math.min(max, Math.max(min, v)));

async function prepare(input: ModelCallInput): Promise<Prepared> {
  let gate: ModelAccess | undefined;
  let userKeys: Record<string, string> = {};
  if (input.caller.kind === 'account') {
    [gate, userKeys] = await Promise.all([modelAccess(input.caller.account), userProviderKeys(input.caller.account.userId)]);
  }
  let model: CatalogueModel;
  if (input.model) {
    const found = findModel(input.model);
    if (!found) throw new UnknownModelError(input.model);
    if (gate && !gate.allowedModels.includes(found.id)) throw new ModelRestrictedError(found.id, gate.allowedModels);
    model = (!isAvailable(found, userKeys) && localStandIn(gate?.allowedModels)) || found;
  } else {
    model = selectModel(input.taskType ?? DEFAULT_TASK_TYPE, gate?.allowedModels, userKeys);
  }
  const connection = connectionFor(model, userKeys);
  if (!connection) throw new NoModelAvailableError(`no configured provider serves ${model.id}`);

  const promptTokens = estimatePromptTokens(input.messages);
  if (promptTokens >= model.contextWindow) {
    throw new ModelRequestError(
      'CONTEXT_WINDOW_EXCEEDED',
      `the prompt (about ${promptTokens} tokens) does not fit the ${model.contextWindow}-token context window of ${model.id}`,
    );
  }
  const maxOutputTokens = Math.min(input.maxTokens ?? model.maxOutputTokens, model.maxOutputTokens, model.contextWindow - promptTokens);
  const settings = {
    temperature: clamp(input.temperature, 0, vendorOf(model.id) === 'anthropic' ? 1 : 2),
    topP: clamp(input.topP, 0, 1),
    maxOutputTokens,
  };

  // An agent's call: refused while the loop breaker holds the agent, counted by its signature.
  if (input.caller.kind === 'account' && input.caller.agentId)
    await watchAgentCall(input.caller.account.userId, input.caller.agentId, modelCallSignature(model.id, input.messages));

  let reservation: Reservation | undefined;
  if (input.caller.kind === 'account' && gate) {
    reservation = await reserve({
      userId: input.caller.account.userId,
      plan: gate.plan,
      periodStart: billingPeriod(gate.subscription).start,
      credits: estimateCredits(model, promptTokens, input.maxTokens),
      free: connection.byok || gate.access.isAdmin,
      agentId: input.caller.agentId,
      // The most the call can cost: every step at the output ceiling the provider is given.
      budgetUsd: costUsd(model, promptTokens, maxOutputTokens) * stepsOf(input),
    });
  }
  return { model, connection, gate, reservation, settings };
}

const stepsOf = (input: ModelCallInput) => (input.clientTools ? 1 : Math.min(MAX_STEPS, Math.max(1, input.maxSteps ?? (input.tools ? 5 : 1))));

/** Client tools as AI SDK tools without `execute`: the SDK stops at their calls and hands them back. */
function clientToolSet(sdk: TextSdk, tools: ClientTool[]): ToolSet {
  return Object.fromEntries(
    tools.map((t) => [t.name, sdk.tool({ description: t.description, inputSchema: sdk.jsonSchema(t.parameters ?? { type: 'object', properties: {} }) })]),
  );
}

const toolChoiceOf = (choice: ModelCallInput['toolChoice']) =>
  choice && typeof choice === 'object' ? { type: 'tool' as const, toolName: choice.toolName } : choice;

/** The SDK (loaded here, on the first call, not at init) and the options of the call. */
async function modelCall(input: ModelCallInput, p: Prepared, signal: AbortSignal) {
  const steps = stepsOf(input);
  const [sdk, model] = await Promise.all([textSdk(), languageModel(p.model, p.connection)]);
  const options = {
    model,
    messages: input.messages,
    ...p.settings,
    ...(input.tools ? { tools: input.tools, stopWhen: sdk.stepCountIs(steps) } : {}),
    ...(input.clientTools?.length ? { tools: clientToolSet(sdk, input.clientTools), toolChoice: toolChoiceOf(input.toolChoice) } : {}),
    ...(input.stopSequences?.length ? { stopSequences: input.stopSequences } : {}),
    // No hidden retries: a failing provider answers at once, within the timeout.
    maxRetries: 0,
    abortSignal: signal,
  };
  return { sdk, options };
}

function timeoutSignal(input: ModelCallInput) {
  // MODEL_API_TIMEOUT_MS, but never past the request's deadline: a timeout answered with its code, not cut off.
  const timeout = outsideCallSignal(modelConfig().timeoutMs);
  return { timeout, signal: input.abortSignal ? AbortSignal.any([timeout, input.abortSignal]) : timeout };
}

/** Which of an attempt's own bounds ran out: a streamed call's first token, or a whole answer's first response. */
type LateCause = 'first-token-timeout' | 'response-timeout';

/**
 * Why a failure lets the call move to the next model of its chain, undefined when it does not: the
 * call's own time is up, the caller went away, or the provider refused the request itself (4xx).
 */
function retryCauseOf(sdk: TextSdk | undefined, err: unknown, timedOut: boolean, late: LateCause | undefined): string | undefined {
  if (timedOut) return undefined;
  if (late) return late;
  const apiError = sdk?.APICallError.isInstance(err) ? err : undefined;
  const status = apiError?.statusCode;
  if (status === 429) return 'rate-limited';
  if (status !== undefined) return status >= 500 ? 'server-error' : undefined;
  if (apiError || err instanceof TypeError) return 'connection';
  return undefined;
}

function providerFailure(sdk: TextSdk | undefined, err: unknown, timedOut: boolean, model: string, late?: LateCause, retryable = true): ProviderFailureError {
  const retryCause = retryable ? retryCauseOf(sdk, err, timedOut, late) : undefined;
  if (timedOut || late) return new ProviderFailureError('PROVIDER_TIMEOUT', `the provider did not answer ${model} in time`, undefined, retryCause);
  const status = sdk?.APICallError.isInstance(err) ? err.statusCode : undefined;
  return new ProviderFailureError('PROVIDER_ERROR', `the provider failed to answer ${model}${status ? ` (status ${status})` : ''}`, status, retryCause);
}

/** The models after the primary, in order: the agent's chain or the catalogue's, within the plan and served by a provider. */
function fallbacksOf(input: ModelCallInput, p: Prepared): string[] {
  const chain = input.fallbackModels ?? defaultFallbacks(p.model.id);
  return [...new Set(chain)].filter((id) => id !== p.model.id && findModel(id) && (!p.gate || p.gate.allowedModels.includes(id)));
}

/**
 * THE failover: the call goes to the primary, and on a retryable failure before its first token
 * (429, 5xx, a connection error, no first token within MODEL_FIRST_TOKEN_TIMEOUT_MS, no whole answer
 * within MODEL_RESPONSE_TIMEOUT_MS) to the next
 * model of the chain, each under its own reservation. A model whose breaker is open is skipped,
 * but for the chain's last. A failure after the first token is the attempt's own (it is not retried).
 */
async function withFailover<R>(input: ModelCallInput, first: Prepared, attempt: (p: Prepared) => Promise<R>): Promise<R> {
  const chain = [first.model.id, ...fallbacksOf(input, first)];
  const userId = input.caller.kind === 'account' ? input.caller.account.userId : undefined;
  let cause: string | undefined;
  let failure: unknown;
  for (const [i, modelId] of chain.entries()) {
    let p: Prepared;
    if (i === 0) p = first;
    else {
      try {
        p = await prepare({ ...input, model: modelId });
      } catch (err) {
        if (err instanceof ModelRequestError || err instanceof NoModelAvailableError) continue;
        throw err;
      }
      p.fallbackFrom = first.model.id;
    }
    let ticket: BreakerTicket;
    try {
      ticket = await admit(breakerIdOf(p.connection, p.model.id, userId));
    } catch {
      // The breaker's store failing must not stop the call: the model is called as if closed.
      ticket = { id: '', admission: 'call' };
    }
    if (ticket.admission === 'skip' && i < chain.length - 1) {
      await releaseQuietly(p);
      cause ??= 'breaker-open';
      continue;
    }
    try {
      const out = await attempt(p);
      if (ticket.id) await recordSuccess(ticket).catch(() => {});
      await noteServedBy(input.caller, first.model.id, p.model.id, cause, ticket.lastFailureAtMs);
      return out;
    } catch (err) {
      if (!(err instanceof ProviderFailureError) || !err.retryCause) throw err;
      if (ticket.id) await recordFailure(ticket).catch(() => {});
      cause = err.retryCause;
      failure = err;
    }
  }
  throw failure ?? new NoModelAvailableError(`no configured provider serves ${first.model.id}`);
}

const tokensOf = (u: LanguageModelUsage | undefined): TokenUsage => {
  const promptTokens = u?.inputTokens ?? 0;
  const completionTokens = u?.outputTokens ?? 0;
  return { promptTokens, completionTokens, totalTokens: u?.totalTokens ?? promptTokens + completionTokens };
};

async function meter(input: ModelCallInput, p: Prepared, usage: TokenUsage): Promise<number> {
  if (input.caller.kind === 'prepaid') {
    await recordPayerUsage(input.caller.payerId, p.model, { ...usage, fallbackFrom: p.fallbackFrom }, input.caller.reference);
    return 0;
  }
  return settle(p.reservation!, p.model, input.caller.agentId, { ...usage, fallbackFrom: p.fallbackFrom }, p.connection.byok);
}

async function releaseQuietly(p: Prepared) {
  if (p.reservation) await release(p.reservation);
}

function resultOf(
  p: Prepared,
  id: string,
  text: string,
  finishReason: string,
  usage: TokenUsage,
  charged: number,
  steps: number,
  responseMessages: ModelMessage[],
  toolCalls: ToolCallRequest[] = [],
): ModelCallResult {
  return {
    id,
    model: p.model.id,
    provider: vendorOf(p.model.id),
    servedBy: p.connection.name,
    ...(p.fallbackFrom ? { fallbackFrom: p.fallbackFrom } : {}),
    text,
    finishReason,
    usage,
    costUsd: costUsd(p.model, usage.promptTokens, usage.completionTokens),
    creditsCharged: charged,
    byok: p.connection.byok,
    steps,
    responseMessages,
    toolCalls,
  };
}

/** The SDK's tool call as the caller sees it: its id, the tool's name and the arguments as JSON text. */
const toolCallOf = (call: { toolCallId: string; toolName: string; input: unknown }): ToolCallRequest => ({
  id: call.toolCallId,
  name: call.toolName,
  arguments: typeof call.input === 'string' ? call.input : JSON.stringify(call.input ?? {}),
});

const newCallId = () => `chatcmpl-${crypto.randomUUID()}`;

/** One chat completion (or a multi-step tool loop), gated, metered. */
export async function generateChat<TOOLS extends ToolSet>(input: ModelCallInput<TOOLS>): Promise<ModelCallResult> {
  const first = await prepare(input);
  const { timeout, signal } = timeoutSignal(input);
  return withFailover(input, first, (p) => generateOnce(input, p, timeout, signal));
}

async function generateOnce(input: ModelCallInput, p: Prepared, timeout: AbortSignal, callSignal: AbortSignal): Promise<ModelCallResult> {
  // No answer to the first step within the bound (a provider that hangs): this model is given up
  // and the chain's next one asked, within the call's own deadline.
  const late = new AbortController();
  const lateTimer = setTimeout(() => late.abort(), modelConfig().responseTimeoutMs);
  const signal = AbortSignal.any([callSignal, late.signal]);
  let stepsDone = 0;
  let sdk: TextSdk | undefined;
  let out;
  try {
    const call = await modelCall(input, p, signal);
    sdk = call.sdk;
    out = await sdk.generateText({
      ...call.options,
      onStepFinish: () => {
        stepsDone += 1;
        clearTimeout(lateTimer);
      },
    });
  } catch (err) {
    await releaseQuietly(p);
    // A tool loop past its first step has run tools: another model answering would run them again.
    throw providerFailure(sdk, err, timeout.aborted, p.model.id, late.signal.aborted ? 'response-timeout' : undefined, stepsDone === 0);
  } finally {
    clearTimeout(lateTimer);
  }
  const usage = tokensOf(out.totalUsage);
  const charged = await meter(input, p, usage);
  const toolCalls = input.clientTools ? out.toolCalls.map(toolCallOf) : [];
  return resultOf(
    p,
    out.response.id || newCallId(),
    out.text,
    out.finishReason,
    usage,
    charged,
    out.steps.length,
    out.response.messages as ModelMessage[],
    toolCalls,
  );
}

/**
 * The same call, streamed. Gate, model and reservation errors throw before anything is streamed,
 * and so does a provider that fails before its first token, so an HTTP caller can still answer
 * with a status code; a failure after that ends the text stream with the error.
 */
export async function streamChat<TOOLS extends ToolSet>(input: ModelCallInput<TOOLS>): Promise<ModelStream> {
  const first = await prepare(input);
  const { timeout, signal } = timeoutSignal(input);
  return withFailover(input, first, (p) => streamOnce(input, p, timeout, signal));
}

async function streamOnce(input: ModelCallInput, p: Prepared, timeout: AbortSignal, callSignal: AbortSignal): Promise<ModelStream> {
  // No first token within the bound: this model is given up and the chain's next one asked.
  const late = new AbortController();
  const lateTimer = setTimeout(() => late.abort(), modelConfig().firstTokenTimeoutMs);
  const signal = AbortSignal.any([callSignal, late.signal]);
  const { sdk, options } = await modelCall(input, p, signal).catch(async (err: unknown) => {
    clearTimeout(lateTimer);
    await releaseQuietly(p);
    throw err;
  });
  const stream = sdk.streamText({ ...options, onError: () => {} });
  const parts = stream.fullStream[Symbol.asyncIterator]();
  const head: string[] = [];
  let finished: { usage: TokenUsage; finishReason: string } | undefined;
  let steps = 0;
  const toolCalls: ToolCallRequest[] = [];
  const take = (part: Awaited<ReturnType<typeof parts.next>>['value']): 'more' | 'done' => {
    if (!part) return 'done';
    if (part.type === 'error') throw part.error;
    if (part.type === 'abort') throw new Error('aborted');
    if (part.type === 'finish-step') steps += 1;
    if (part.type === 'tool-call' && input.clientTools) toolCalls.push(toolCallOf(part));
    if (part.type === 'finish') {
      finished = { usage: tokensOf(part.totalUsage), finishReason: part.finishReason };
      return 'done';
    }
    return 'more';
  };
  try {
    for (;;) {
      const next = await parts.next();
      if (next.done || take(next.value) === 'done') break;
      if (next.value.type === 'text-delta') {
        head.push(next.value.text);
        break;
      }
    }
  } catch (err) {
    await releaseQuietly(p);
    throw providerFailure(sdk, err, timeout.aborted, p.model.id, late.signal.aborted ? 'first-token-timeout' : undefined);
  } finally {
    clearTimeout(lateTimer);
  }

  const id = newCallId();
  let text = head.join('');
  let settleResult!: (r: ModelCallResult) => void;
  let failResult!: (e: unknown) => void;
  const result = new Promise<ModelCallResult>((resolve, reject) => {
    settleResult = resolve;
    failResult = reject;
  });
  // Callers that only read the text must not see an unhandled rejection.
  result.catch(() => {});

  async function* textStream(): AsyncGenerator<string> {
    let failure: unknown;
    try {
      yield* head;
      while (!finished) {
        const next = await parts.next();
        if (next.done || take(next.value) === 'done') break;
        if (next.value.type === 'text-delta') {
          text += next.value.text;
          yield next.value.text;
        }
      }
    } catch (err) {
      failure = providerFailure(sdk, err, timeout.aborted, p.model.id);
      throw failure;
    } finally {
      // Read to the end, failed, or abandoned by the reader: the tokens known so far are metered;
      // without a final usage report the reservation stands as the charge.
      try {
        const usage = finished?.usage ?? (await estimateAbandoned(p));
        const charged = await meter(input, p, usage);
        if (failure) failResult(failure);
        else
          settleResult(
            resultOf(p, id, text, finished?.finishReason ?? 'other', usage, charged, steps, text ? [{ role: 'assistant', content: text }] : [], toolCalls),
          );
      } catch (err) {
        failResult(err);
      }
    }
  }
  return {
    id,
    model: p.model.id,
    provider: vendorOf(p.model.id),
    ...(p.fallbackFrom ? { fallbackFrom: p.fallbackFrom } : {}),
    textStream: textStream(),
    result,
  };
}

/** Usage of a stream that ended without a usage report: the reserved estimate, as tokens. */
async function estimateAbandoned(p: Prepared): Promise<TokenUsage> {
  const completionTokens = Math.min(p.settings.maxOutputTokens, 256);
  return { promptTokens: 0, completionTokens, totalTokens: completionTokens };
}

/** Model records (spec 2.14) with `available` for the platform's configured providers. */
export function listModels() {
  return catalogue().models.map((m) => ({
    id: m.id,
    name: m.name,
    provider: vendorOf(m.id),
    description: m.description,
    tags: m.tags,
    inputCost: m.inputCost,
    outputCost: m.outputCost,
    contextWindow: m.contextWindow,
    available: isAvailable(m),
  }));
}

export { providerHealth } from './health';
