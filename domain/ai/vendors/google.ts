import { randomUUID } from 'node:crypto';
import { GoogleGenerativeAILanguageModel } from '@ai-sdk/google/internal';
import type { LanguageModel } from 'ai';

/**
 * Gemini through the class @ai-sdk/google's provider makes (same provider name, URL and key header),
 * from the package's `internal` entry: the provider object also holds embedding, image and tool code
 * that no bundle could then drop. Without the provider's list of URLs Gemini fetches itself,
 * a file part given by URL is downloaded by the SDK and sent inline; the platform sends text only.
 */
export function googleModel(modelId: string, baseUrl: string, apiKey: string | undefined): LanguageModel {
  return new GoogleGenerativeAILanguageModel(modelId, {
    provider: 'google.generative-ai',
    baseURL: baseUrl.replace(/\/+$/, ''),
    headers: () => ({ 'x-goog-api-key': apiKey }),
    generateId: randomUUID,
  });
}
