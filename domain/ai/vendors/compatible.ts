import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ImageModel, LanguageModel } from 'ai';

interface CompatibleConnection {
  name: string;
  baseUrl: string;
  apiKey: string | undefined;
}

export const compatibleChatModel = (modelId: string, c: CompatibleConnection): LanguageModel =>
  createOpenAICompatible({ name: c.name, baseURL: c.baseUrl, apiKey: c.apiKey, includeUsage: true }).chatModel(modelId);

export const compatibleImageModel = (modelId: string, c: CompatibleConnection): ImageModel =>
  createOpenAICompatible({ name: c.name, baseURL: c.baseUrl, apiKey: c.apiKey }).imageModel(modelId);
