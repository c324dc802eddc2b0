/**
 * The gateway's plugin ids alone, for platform/config.ts (GATEWAY_PRICES keys): importing them from
 * ./gateway would put that whole contract, and its schema building, into every function.
 */
export const GATEWAY_PLUGIN_IDS = ['agent', 'generate-text', 'tts', 'stt'] as const;
export type GatewayPluginId = (typeof GATEWAY_PLUGIN_IDS)[number];
