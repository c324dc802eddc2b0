import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { AuthContext } from '#domain/auth/authenticate';
import { config } from '#platform/config';
import { advancePasskeyCounter, getPasskey, passkeysOf, savePasskey, saveWebauthnChallenge, takeWebauthnChallenge } from '#data/webauthn';
import { conflict, invalid, unprocessable } from '#platform/errors';
import { ownAgent } from '#domain/agents/read';

/**
 * Passkeys that verify agents. A passkey belongs to the account; registering it
 * and proving it are ceremonies with a server challenge each (single use, 5 minutes). The relying
 * party is the platform's own web origin (APP_URL).
 */

const REGISTER = 'register';
const verifyPurpose = (agentId: string) => `verify#${agentId}`;

function relyingParty() {
  const url = new URL(config().appUrl);
  return { rpID: url.hostname, origin: url.origin };
}

const failed = (why: string) => invalid(`verification failed: ${why}`, 'VERIFICATION_FAILED');
const noChallenge = () =>
  unprocessable('no passkey challenge is pending (it is single use and lasts 5 minutes): ask for new options', 'WEBAUTHN_CHALLENGE_MISSING');

export async function passkeyRegistrationOptions(auth: AuthContext, agentId: string) {
  await ownAgent(auth, agentId);
  const { rpID } = relyingParty();
  const existing = await passkeysOf(auth.userId);
  const { generateRegistrationOptions } = await import('./simplewebauthn');
  const options = await generateRegistrationOptions({
    rpName: 'Agent platform',
    rpID,
    userName: auth.email,
    userID: new TextEncoder().encode(auth.userId),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
  await saveWebauthnChallenge(auth.userId, REGISTER, options.challenge);
  return options;
}

export async function registerPasskey(auth: AuthContext, agentId: string, response: RegistrationResponseJSON) {
  await ownAgent(auth, agentId);
  const expectedChallenge = await takeWebauthnChallenge(auth.userId, REGISTER);
  if (!expectedChallenge) throw noChallenge();
  const { rpID, origin } = relyingParty();
  const { verifyRegistrationResponse } = await import('./simplewebauthn');
  let result: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    result = await verifyRegistrationResponse({ response, expectedChallenge, expectedOrigin: origin, expectedRPID: rpID, requireUserVerification: false });
  } catch (err) {
    throw failed((err as Error).message);
  }
  if (!result.verified) throw failed('the registration response does not verify');
  const { credential } = result.registrationInfo;
  const passkey = {
    credentialId: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: credential.transports,
    createdAt: new Date().toISOString(),
  };
  if (!(await savePasskey(auth.userId, passkey))) throw conflict('this passkey is already registered', 'PASSKEY_EXISTS');
  return { credentialId: passkey.credentialId, createdAt: passkey.createdAt };
}

export async function passkeyAssertionOptions(auth: AuthContext, agentId: string) {
  await ownAgent(auth, agentId);
  const passkeys = await passkeysOf(auth.userId);
  if (passkeys.length === 0) throw unprocessable('register a passkey first', 'NO_PASSKEY');
  const { generateAuthenticationOptions } = await import('./simplewebauthn');
  const options = await generateAuthenticationOptions({
    rpID: relyingParty().rpID,
    allowCredentials: passkeys.map((p) => ({ id: p.credentialId, transports: p.transports })),
    userVerification: 'preferred',
  });
  await saveWebauthnChallenge(auth.userId, verifyPurpose(agentId), options.challenge);
  return options;
}

function parseAssertion(signature: string): AuthenticationResponseJSON {
  let parsed: unknown;
  try {
    parsed = JSON.parse(signature);
  } catch {
    throw failed('for webauthn, signature must be the JSON of the authenticator assertion (PublicKeyCredential.toJSON())');
  }
  const a = parsed as Partial<AuthenticationResponseJSON> | null;
  if (!a || typeof a.id !== 'string' || typeof a.response !== 'object' || a.response === null) throw failed('the assertion has no credential id or response');
  return a as AuthenticationResponseJSON;
}

/** Checks an assertion over this agent's pending challenge by one of the user's passkeys, and moves its counter. */
export async function provePasskey(auth: AuthContext, agentId: string, signature: string) {
  const assertion = parseAssertion(signature);
  const expectedChallenge = await takeWebauthnChallenge(auth.userId, verifyPurpose(agentId));
  if (!expectedChallenge) throw noChallenge();
  const passkey = await getPasskey(auth.userId, assertion.id);
  if (!passkey) throw unprocessable('the assertion is by a passkey this account has not registered', 'UNKNOWN_PASSKEY');
  const { rpID, origin } = relyingParty();
  const { verifyAuthenticationResponse } = await import('./simplewebauthn');
  let result: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    result = await verifyAuthenticationResponse({
      response: assertion,
      expectedChallenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: {
        id: passkey.credentialId,
        publicKey: Buffer.from(passkey.publicKey, 'base64url'),
        counter: passkey.counter,
        transports: passkey.transports,
      },
      requireUserVerification: false,
    });
  } catch (err) {
    throw failed((err as Error).message);
  }
  if (!result.verified) throw failed('the assertion signature does not verify');
  const { newCounter } = result.authenticationInfo;
  if (!(await advancePasskeyCounter(auth.userId, passkey.credentialId, passkey.counter, newCounter)))
    throw failed('the passkey was used concurrently; try again');
  return { credentialId: passkey.credentialId, counter: newCounter };
}
