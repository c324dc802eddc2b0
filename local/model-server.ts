import { localModelConfig } from '#platform/config';

/**
 * The local stack's keyless model, decided at start: an OpenAI-compatible model server answering
 * `GET <base>/models` on loopback (Ollama's and llama.cpp server's defaults, or LOCAL_MODEL_URL)
 * serves the stack's chat with its models; else the built-in local model answers. What is found is
 * handed to the settings (LOCAL_MODEL_URL, LOCAL_MODEL_SERVER_MODELS), which the catalogue reads.
 */

/** A server that is there answers its listing at once; one that is not refuses the connection. */
const PROBE_TIMEOUT_MS = 1_500;

export interface FoundModelServer {
  baseUrl: string;
  models: string[];
}

/** The model ids a server lists (`{data: [{id}]}`, the OpenAI wire format); undefined when it does not answer so. */
async function listModels(baseUrl: string): Promise<string[] | undefined> {
  try {
    const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/models`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), redirect: 'error' });
    if (!res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    const body = (await res.json()) as { data?: { id?: unknown }[] };
    const ids = (body.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === 'string' && id.length > 0);
    return ids.length ? ids : undefined;
  } catch {
    return undefined;
  }
}

/** The first of `baseUrls` that lists at least one model, all asked at once. */
export async function findModelServer(baseUrls: readonly string[]): Promise<FoundModelServer | undefined> {
  const listings = await Promise.all(baseUrls.map(listModels));
  const at = listings.findIndex((models) => models !== undefined);
  return at < 0 ? undefined : { baseUrl: baseUrls[at]!, models: listings[at]! };
}

/**
 * Looks for a model server as the settings say and returns the settings that hand it to the model
 * layer (none when nothing was found or nothing is to be looked for), with the line the start prints.
 */
export async function localModelSettings(): Promise<{ settings: Record<string, string>; report: string | undefined }> {
  const local = localModelConfig();
  if (local.mode === 'off') return { settings: {}, report: 'no keyless model (LOCAL_MODEL=off): chat needs a provider setting' };
  if (local.mode === 'builtin') return { settings: {}, report: 'the built-in local model answers chat (LOCAL_MODEL=builtin)' };
  if (local.server && local.listed) return { settings: {}, report: `local model server at ${local.server.baseUrl}: models ${local.server.models.join(', ')}` };
  const found = await findModelServer(local.probeUrls);
  if (!found)
    return {
      settings: {},
      report: `no model server at ${local.probeUrls.join(' or ')}: the built-in local model answers chat (set LOCAL_MODEL_URL or a provider for a real one)`,
    };
  return {
    settings: { LOCAL_MODEL_URL: found.baseUrl, LOCAL_MODEL_SERVER_MODELS: found.models.join(',') },
    report: `local model server found at ${found.baseUrl}: models ${found.models.join(', ')}`,
  };
}
