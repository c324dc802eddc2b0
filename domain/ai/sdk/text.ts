/**
 * The AI SDK's text calls, loaded on a container's first chat call (textSdk() in ../model-layer.ts),
 * not at init: the routes that only read (model lists, usage, keys, quotes) never evaluate `ai` and
 * the zod it brings. One module per use (text, image, speech): esbuild keeps every export
 * of a dynamically imported module, so a function that only makes images does not carry these.
 */
export { APICallError, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
