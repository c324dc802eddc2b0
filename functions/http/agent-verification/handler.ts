import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { agentVerificationContract } from '#contract/agent-verification';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';
import { readVerification, removeVerification, verify } from './verify';
import { passkeyAssertionOptions, passkeyRegistrationOptions, registerPasskey } from './webauthn';

export const handler = createHandler(agentVerificationContract, {
  getAgentVerification: async ({ auth, params }) => readVerification(auth, params.id),
  verifyAgent: async ({ auth, params, body }) => verify(auth, params.id, body),
  removeAgentVerification: async ({ auth, params }) => removeVerification(auth, params.id),
  passkeyRegistrationOptions: async ({ auth, params }) => passkeyRegistrationOptions(auth, params.id),
  registerPasskey: async ({ auth, params, body }) => reply.created(await registerPasskey(auth, params.id, body.response as RegistrationResponseJSON)),
  passkeyAssertionOptions: async ({ auth, params }) => passkeyAssertionOptions(auth, params.id),
});
