/**
 * Bundles only (build/substitutes.ts): `@ai-sdk/gateway`, the AI SDK's default global provider (Vercel's
 * AI Gateway), used by `ai` only for a model given as a bare string id, and to recognise that
 * provider's errors. Every call here passes a provider model built in domain/ai/providers.ts, so no
 * error can come from it: its error classes recognise nothing, and the default provider refuses to
 * serve. Saves the provider and its OIDC client in every function that calls a model.
 */
class NotBundledGatewayError extends Error {
  static isInstance(_error: unknown): boolean {
    return false;
  }
}

export const GatewayError = NotBundledGatewayError;
export const GatewayAuthenticationError = NotBundledGatewayError;

const notBundled = (): never => {
  throw new Error('the AI SDK default provider (AI Gateway) is not bundled: pass a provider model (domain/ai/providers.ts)');
};

export const gateway = Object.assign(notBundled, {
  languageModel: notBundled,
  textEmbeddingModel: notBundled,
  embeddingModel: notBundled,
  imageModel: notBundled,
  transcriptionModel: notBundled,
  speechModel: notBundled,
  rerankingModel: notBundled,
});

export const createGateway = () => gateway;
