/** The AI SDK's speech and transcription calls, loaded on the first tts or stt plugin call (speechSdk() in functions/http/gateway/plugins.ts); see ./text.ts. */
export { experimental_generateSpeech, experimental_transcribe } from 'ai';
