import type { AuthContext } from '#domain/auth/authenticate';
import { modelAccess } from '#domain/ai/access';
import { userProviderKeys } from '#domain/ai/byok';
import { catalogue, isAvailable, PlanRequiredError } from '#domain/ai/model-layer';
import { vendorOf } from '#domain/models/catalogue';
import { AGENT_MODEL_PREFIX } from '#contract/openai-compatible';
import { listAgents } from '#data/agents';

const epochSeconds = (iso: string | undefined) => {
  const ms = iso ? Date.parse(iso) : Number.NaN;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : 0;
};

/** The models the model layer would let this caller call (its plan's, that a configured provider or its own key serves). */
async function callableModels(auth: AuthContext): Promise<string[]> {
  try {
    const [access, keys] = await Promise.all([modelAccess(auth), userProviderKeys(auth.userId)]);
    return catalogue()
      .models.filter((m) => access.allowedModels.includes(m.id) && isAvailable(m, keys))
      .map((m) => m.id);
  } catch (err) {
    // Without a paid plan no catalogue model answers; the agents are still listed (their chat says why).
    if (err instanceof PlanRequiredError) return [];
    throw err;
  }
}

/** `GET /v1/models`: OpenAI's list of the caller's models, then its agents as `agent/<agentId>`. */
export async function listOpenAiModels(auth: AuthContext) {
  const [models, agents] = await Promise.all([callableModels(auth), listAgents(auth.userId)]);
  const created = epochSeconds(catalogue().version);
  return {
    object: 'list' as const,
    data: [
      ...models.map((id) => ({ id, object: 'model' as const, created, owned_by: vendorOf(id) })),
      ...agents.map((a) => ({
        id: `${AGENT_MODEL_PREFIX}${a.id}`,
        object: 'model' as const,
        created: epochSeconds(a.createdAt),
        owned_by: 'agent',
        name: a.name,
      })),
    ],
  };
}
