import type { generateImage, ImageModel } from 'ai';
import { modelConfig } from '#platform/config';
import { modelAccess } from './access';
import { userProviderKeys } from './byok';
import { catalogue, costUsd, findImageModel, planReaches, type CatalogueModel } from '#domain/models/catalogue';
import { ModelRestrictedError, NoModelAvailableError, ProviderFailureError, UnknownModelError } from './errors';
import { billingPeriod, estimateCredits, release, reserve, settle } from './metering';
import type { AccountIdentity } from './access';
import { connectionFor, type Connection } from './providers';
import { outsideCallSignal } from '#platform/deadline';

/**
 * Image generation through the model layer: the same plan gate, provider choice (direct OpenAI
 * wins over the OpenAI-compatible aggregator; a user's own key first) and spending rule as chat.
 * The reservation is the most the images can cost (`maxOutputTokens` each); the charge settles to
 * the tokens the provider reports, or stays at the reservation when it reports none.
 */

export interface ImageCallInput {
  account: AccountIdentity;
  agentId?: string;
  prompt: string;
  /** `<vendor>/<model>` from the catalogue's image models; default the cheapest available. */
  model?: string;
  size?: `${number}x${number}`;
  n?: number;
}

export interface GeneratedImage {
  bytes: Uint8Array;
  mediaType: string;
}

export interface ImageCallResult {
  model: string;
  servedBy: string;
  images: GeneratedImage[];
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  costUsd: number;
  creditsCharged: number;
  byok: boolean;
}

/** The AI SDK's image call, imported on the first image of a container, as the text calls are (./model-layer.ts). */
type ImageSdk = typeof import('./sdk/image');
const imageSdk = (): Promise<ImageSdk> => import('./sdk/image');

/** The vendor's provider code is imported on first use, as for chat (domain/ai/providers.ts). */
async function imageModel(model: CatalogueModel, c: Connection): Promise<ImageModel | undefined> {
  if (c.kind === 'openai') return (await import('./openai-wire')).openAIWire({ baseURL: c.baseUrl, apiKey: c.apiKey }).image(model.vendorModelId);
  if (c.kind === 'compatible') return (await import('./vendors/compatible')).compatibleImageModel(model.id, c);
  return undefined;
}

function pickModel(requested: string | undefined, allowed: (m: CatalogueModel) => boolean, userKeys: Record<string, string>): CatalogueModel {
  if (requested) {
    const found = findImageModel(requested);
    if (!found) throw new UnknownModelError(requested);
    if (!allowed(found))
      throw new ModelRestrictedError(
        found.id,
        catalogue()
          .imageModels.filter(allowed)
          .map((m) => m.id),
      );
    return found;
  }
  const candidates = catalogue()
    .imageModels.filter((m) => allowed(m) && connectionFor(m, userKeys))
    .sort((a, b) => a.inputCost + a.outputCost - (b.inputCost + b.outputCost));
  if (!candidates[0]) throw new NoModelAvailableError('no available model generates images');
  return candidates[0];
}

export async function generateImages(input: ImageCallInput): Promise<ImageCallResult> {
  const [gate, userKeys] = await Promise.all([modelAccess(input.account), userProviderKeys(input.account.userId)]);
  const model = pickModel(input.model, (m) => planReaches(gate.plan, m), userKeys);
  const connection = connectionFor(model, userKeys);
  const sdkModel = connection && (await imageModel(model, connection));
  if (!connection || !sdkModel) throw new NoModelAvailableError(`no configured provider generates images with ${model.id}`);
  const n = input.n ?? 1;
  const promptTokens = Math.ceil(input.prompt.length / 4) + 4;
  const reservation = await reserve({
    userId: input.account.userId,
    plan: gate.plan,
    periodStart: billingPeriod(gate.subscription).start,
    credits: estimateCredits(model, promptTokens, model.maxOutputTokens * n),
    free: connection.byok || gate.access.isAdmin,
    agentId: input.agentId,
    budgetUsd: costUsd(model, promptTokens, model.maxOutputTokens * n),
  });
  const timeout = outsideCallSignal(modelConfig().timeoutMs);
  let out: Awaited<ReturnType<typeof generateImage>>;
  let sdk: ImageSdk | undefined;
  try {
    sdk = await imageSdk();
    out = await sdk.generateImage({ model: sdkModel, prompt: input.prompt, n, size: input.size, maxRetries: 0, abortSignal: timeout });
  } catch (err) {
    await release(reservation);
    if (timeout.aborted) throw new ProviderFailureError('PROVIDER_TIMEOUT', `the provider did not answer ${model.id} in time`);
    const status = sdk?.APICallError.isInstance(err) ? err.statusCode : undefined;
    throw new ProviderFailureError('PROVIDER_ERROR', `the provider failed to generate an image with ${model.id}${status ? ` (status ${status})` : ''}`, status);
  }
  const reported = out.usage?.inputTokens !== undefined || out.usage?.outputTokens !== undefined;
  const usage = reported
    ? { promptTokens: out.usage.inputTokens ?? 0, completionTokens: out.usage.outputTokens ?? 0 }
    : { promptTokens, completionTokens: model.maxOutputTokens * n };
  const charged = await settle(reservation, model, input.agentId, usage, connection.byok);
  return {
    model: model.id,
    servedBy: connection.name,
    images: out.images.map((i) => ({ bytes: i.uint8Array, mediaType: i.mediaType })),
    usage: { ...usage, totalTokens: usage.promptTokens + usage.completionTokens },
    costUsd: costUsd(model, usage.promptTokens, usage.completionTokens),
    creditsCharged: charged,
    byok: connection.byok,
  };
}
