/** The AI SDK's image call, loaded on the first image generation (imageSdk() in ../images.ts); see ./text.ts. */
export { APICallError, generateImage } from 'ai';
