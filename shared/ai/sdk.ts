/**
 * The parts of the AI SDK the platform calls. Loaded on a container's first model call
 * (`aiSdk()` in providers.ts), not at init: the routes that only read (model lists, usage, keys, quotes) never
 * evaluate `ai` and the zod it brings (issue 16). Named re-exports keep the SDK tree-shaken.
 */
export {
  APICallError,
  experimental_generateSpeech,
  experimental_transcribe,
  generateImage,
  generateText,
  stepCountIs,
  streamText,
  tool,
} from 'ai';
