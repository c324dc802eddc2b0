import type { AuthContext } from '../../shared/auth/authenticate';
import type { GatewayPluginId } from '../../shared/contract/gateway';

/** Who a plugin serves: an account (card) or an anonymous payer (MPP), which gets account-free tools only. */
export type PluginCaller = { kind: 'account'; auth: AuthContext } | { kind: 'payer' };

export interface PluginAnswer {
  message: string;
  /** Plugin-specific fields beside `message` (e.g. base64 audio of `tts`). */
  extra?: Record<string, unknown>;
}

/** A plugin could not produce its answer; the gateway answers 500 `internal` with this code. */
export class PluginFailedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The plugins run through the platform's model layer (shared/ai/model-layer.ts, the AI layer issue).
 * Until it is part of this build there is no honest way to answer, so every plugin fails clearly.
 */
export async function runPlugin(plugin: GatewayPluginId, _input: Record<string, unknown>, _caller: PluginCaller): Promise<PluginAnswer> {
  throw new PluginFailedError('MODEL_LAYER_UNAVAILABLE', `the ${plugin} plugin needs the model layer, which this build does not include yet`);
}
