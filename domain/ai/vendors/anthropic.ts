import { createAnthropic } from '@ai-sdk/anthropic';
import type { LanguageModel } from 'ai';

export const anthropicModel = (modelId: string, baseURL: string, apiKey: string | undefined): LanguageModel => createAnthropic({ baseURL, apiKey })(modelId);
