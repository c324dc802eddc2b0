import type { AuthContext } from '#domain/auth/authenticate';
import { API_KEYS_PER_ACCOUNT, type keysContract } from '#contract/keys';
import { createApiKey as createKey, deleteApiKey as deleteKey, getApiKey as getKey, listApiKeys as listKeys } from '#data/api-keys';
import { getUser } from '#data/users';
import { forbidden, notFound } from '#platform/errors';
import type { OperationContext } from '#http/pipeline';
import { reply } from '#http/reply';

type Route<Op extends string> = Extract<(typeof keysContract)['routes'][number], { operation: Op }>;

/** A leaked key must not be able to mint, list or revoke keys: that takes a signed-in session. */
function requireSession(auth: AuthContext) {
  if (auth.via === 'apiKey') throw forbidden('API keys are managed from a signed-in session, not with an API key', 'SESSION_REQUIRED');
}

const keyNotFound = () => notFound('API key not found');

export async function listApiKeys({ auth }: OperationContext<Route<'listApiKeys'>>) {
  requireSession(auth);
  return { keys: await listKeys(auth.userId) };
}

export async function createApiKey({ auth, body }: OperationContext<Route<'createApiKey'>>) {
  requireSession(auth);
  // The stored email, not the session's claim, which may predate an email change.
  const email = (await getUser(auth.userId))?.email ?? auth.email;
  return reply.created(await createKey(auth.userId, email, body.name, API_KEYS_PER_ACCOUNT));
}

export async function getApiKey({ auth, params }: OperationContext<Route<'getApiKey'>>) {
  requireSession(auth);
  const record = await getKey(auth.userId, params.id);
  if (!record) throw keyNotFound();
  return record;
}

export async function deleteApiKey({ auth, params }: OperationContext<Route<'deleteApiKey'>>) {
  requireSession(auth);
  if (!(await deleteKey(auth.userId, params.id))) throw keyNotFound();
  return { success: true };
}
