import { OpenAIChatLanguageModel, OpenAIImageModel, OpenAISpeechModel, OpenAITranscriptionModel } from '@ai-sdk/openai/internal';

/**
 * The OpenAI wire models this platform uses (chat completions, images, speech, transcription), made
 * as @ai-sdk/openai's `createOpenAI` makes them (same classes, provider names, URLs and Bearer key),
 * from the package's `internal` entry. `createOpenAI` returns one object that also holds the
 * Responses API model and its tools, which no bundle can then leave out, in every function that
 * calls a model (bench/results.json has the bundle sizes).
 */
export interface OpenAIWire {
  chat(modelId: string): OpenAIChatLanguageModel;
  image(modelId: string): OpenAIImageModel;
  speech(modelId: string): OpenAISpeechModel;
  transcription(modelId: string): OpenAITranscriptionModel;
}

export function openAIWire(opts: { baseURL: string; apiKey: string | undefined; name?: string }): OpenAIWire {
  const baseURL = opts.baseURL.replace(/\/+$/, '');
  const name = opts.name ?? 'openai';
  const settings = (kind: string) => ({
    provider: `${name}.${kind}`,
    url: ({ path }: { path: string }) => `${baseURL}${path}`,
    headers: (): Record<string, string | undefined> => (opts.apiKey ? { Authorization: `Bearer ${opts.apiKey}` } : {}),
  });
  return {
    chat: (modelId) => new OpenAIChatLanguageModel(modelId, settings('chat')),
    image: (modelId) => new OpenAIImageModel(modelId, settings('image')),
    speech: (modelId) => new OpenAISpeechModel(modelId, settings('speech')),
    transcription: (modelId) => new OpenAITranscriptionModel(modelId, settings('transcription')),
  };
}
