import type { Hex } from 'viem';
import type * as z from 'zod/mini';
import { readAttestation, readIndexedAttestationUid, type Attestation } from '#adapters/eas';
import { resolveEnsName } from '#adapters/ens';
import type { AuthContext } from '#domain/auth/authenticate';
import { chainConfig, coinbaseVerificationConfig, easConfig, ensConfig } from '#platform/config';
import type { VerifyAgentBody } from '#contract/agent-verification';
import { setAgentVerification, type AgentVerificationRecord } from '#data/agents';
import { getUser } from '#data/users';
import { getWalletSummary } from '#data/wallets';
import { invalid, notFound, unavailable, unprocessable } from '#platform/errors';
import { ownAgent } from '#domain/agents/read';
import { provePasskey } from './webauthn';

/** The message a wallet signs (EIP-191 personal_sign) to verify an agent; bound to the agent id. */
export const verificationMessage = (agentId: string) => `Verify agent ${agentId} on the agent platform`;

const UNVERIFIED = { verified: false, verificationType: null, attestationUid: null, verifierAddress: null, verifiedAt: null, metadata: null } as const;

export async function readVerification(auth: AuthContext, agentId: string) {
  const v = (await ownAgent(auth, agentId)).verification;
  return v ? { verified: true as const, ...v } : UNVERIFIED;
}

const failed = (why: string) => invalid(`verification failed: ${why}`, 'VERIFICATION_FAILED');

/** Recovers the EIP-191 signer of the agent's message; must equal `walletAddress` when that is given. */
async function walletSigner(agentId: string, signature: string, walletAddress: string | undefined): Promise<string> {
  const { getAddress, isHex, recoverMessageAddress } = await import('./viem-proofs');
  if (!isHex(signature) || (signature.length !== 132 && signature.length !== 130)) throw failed('signature must be a 65-byte 0x-prefixed hex signature');
  let signer: string;
  try {
    signer = await recoverMessageAddress({ message: verificationMessage(agentId), signature: signature as Hex });
  } catch {
    throw failed('signature does not recover to an address');
  }
  if (walletAddress && getAddress(walletAddress) !== signer) throw failed(`signature is not by ${walletAddress} over "${verificationMessage(agentId)}"`);
  return signer;
}

const unproven = (message: string, code: string) => unprocessable(message, code);

/** Reads the attestation on chain and refuses anything that does not prove one of `recipients` holds it under `expected.schemaUid` (and from `expected.attester` when given). */
async function checkedAttestation(uid: Hex, recipients: string[], expected: { schemaUid: string; attester?: string }): Promise<Attestation> {
  const { rpcUrl, contractAddress } = easConfig();
  const { schemaUid } = expected;
  const { getAddress } = await import('./viem-proofs');
  let attestation: Attestation;
  try {
    attestation = await readAttestation({ rpcUrl: rpcUrl!, timeoutMs: chainConfig().rpcTimeoutMs, contract: contractAddress, uid });
  } catch {
    throw chainUnavailable();
  }
  if (BigInt(attestation.uid) === 0n || attestation.uid.toLowerCase() !== uid.toLowerCase())
    throw unproven(`attestation ${uid} does not exist`, 'ATTESTATION_NOT_FOUND');
  if (attestation.revocationTime !== 0n) throw unproven('the attestation has been revoked', 'ATTESTATION_REVOKED');
  if (attestation.expirationTime !== 0n && attestation.expirationTime <= BigInt(Math.floor(Date.now() / 1000)))
    throw unproven('the attestation has expired', 'ATTESTATION_EXPIRED');
  if (attestation.schema.toLowerCase() !== schemaUid.toLowerCase())
    throw unproven(`the attestation is not of schema ${schemaUid}`, 'ATTESTATION_SCHEMA_MISMATCH');
  if (!recipients.some((r) => getAddress(r) === getAddress(attestation.recipient)))
    throw unproven(`the attestation's recipient is not ${recipients.map((r) => getAddress(r)).join(' or ')}`, 'ATTESTATION_RECIPIENT_MISMATCH');
  if (expected.attester && getAddress(attestation.attester) !== getAddress(expected.attester))
    throw unproven(`the attestation is not by ${getAddress(expected.attester)}`, 'ATTESTATION_ATTESTER_MISMATCH');
  return attestation;
}

const chainUnavailable = () => unavailable('the chain cannot be read right now; try again', 'CHAIN_UNAVAILABLE');

/** The addresses the account has proven it controls: its wallet sign-in (SIWE) address and its hosted wallet. */
async function provenAddresses(userId: string): Promise<string[]> {
  const [user, wallet] = await Promise.all([getUser(userId, true), getWalletSummary(userId)]);
  return [user?.walletAddress, wallet?.address].filter((a): a is string => typeof a === 'string');
}

/**
 * The recipient an `eas` attestation must name. An attestation is public, so quoting its recipient
 * proves nothing: the address must be one the account has proven (wallet sign-in, hosted wallet),
 * or `walletAddress` with a signature by it over the agent's verification message, as `coinbase`
 * and `ens` require. Without `walletAddress`, any proven address of the account.
 */
async function easRecipients(auth: AuthContext, agentId: string, walletAddress: string | undefined, signature: string | undefined): Promise<string[]> {
  const { getAddress } = await import('./viem-proofs');
  const proven = (await provenAddresses(auth.userId)).map((a) => getAddress(a));
  if (walletAddress === undefined) {
    if (!proven.length) throw failed('this account has proven no wallet address: give walletAddress with a signature by it over the verification message');
    return proven;
  }
  if (proven.includes(getAddress(walletAddress))) return [walletAddress];
  if (signature === undefined) {
    throw failed(
      `${getAddress(walletAddress)} is not an address this account has proven: sign "${verificationMessage(agentId)}" with it and send the signature`,
    );
  }
  return [await walletSigner(agentId, signature, walletAddress)];
}

async function easProof(auth: AuthContext, agentId: string, uid: Hex, walletAddress: string | undefined, signature: string | undefined) {
  const { schemaUid, rpcUrl } = easConfig();
  if (!schemaUid || !rpcUrl) throw unavailable('EAS verification is not configured on this platform', 'EAS_NOT_CONFIGURED');
  const recipients = await easRecipients(auth, agentId, walletAddress, signature);
  const attestation = await checkedAttestation(uid, recipients, { schemaUid });
  const { getAddress } = await import('./viem-proofs');
  return {
    attestationUid: uid,
    verifierAddress: getAddress(attestation.recipient),
    metadata: { checked: 'eas-attestation', schema: attestation.schema, attester: getAddress(attestation.attester), attestedAt: attestedAt(attestation) },
  };
}

const attestedAt = (attestation: Attestation) => new Date(Number(attestation.time) * 1000).toISOString();

/** The signing wallet must hold Coinbase's "Verified Account" attestation: found through Coinbase's indexer, then checked on EAS like any other. */
async function coinbaseProof(agentId: string, signature: string, walletAddress: string | undefined) {
  const signer = await walletSigner(agentId, signature, walletAddress);
  const { rpcUrl } = easConfig();
  const { indexer, attester, schemaUid } = coinbaseVerificationConfig();
  if (!rpcUrl) throw unavailable('coinbase verification is not configured on this platform (no Base RPC)', 'COINBASE_NOT_CONFIGURED');
  let uid: Hex;
  try {
    uid = await readIndexedAttestationUid({ rpcUrl, timeoutMs: chainConfig().rpcTimeoutMs, indexer, recipient: signer as Hex, schemaUid });
  } catch {
    throw chainUnavailable();
  }
  if (BigInt(uid) === 0n) throw unproven(`${signer} holds no Coinbase Verified Account attestation`, 'COINBASE_NOT_VERIFIED');
  const attestation = await checkedAttestation(uid, [signer], { schemaUid, attester });
  const { getAddress } = await import('./viem-proofs');
  return {
    attestationUid: uid,
    verifierAddress: signer,
    metadata: {
      checked: 'coinbase-verified-account',
      schema: schemaUid,
      attester: getAddress(attester),
      attestedAt: attestedAt(attestation),
      message: verificationMessage(agentId),
      signature,
    },
  };
}

/** The ENS name must resolve to the signing wallet. */
async function ensProof(agentId: string, signature: string, walletAddress: string | undefined, ensName: string) {
  const signer = await walletSigner(agentId, signature, walletAddress);
  const { rpcUrl, universalResolver } = ensConfig();
  if (!rpcUrl) throw unavailable('ENS verification is not configured on this platform', 'ENS_NOT_CONFIGURED');
  const { getAddress, normalize } = await import('./viem-proofs');
  let name: string;
  try {
    name = normalize(ensName);
  } catch {
    throw failed(`${ensName} is not a valid ENS name`);
  }
  let resolved: string | null;
  try {
    resolved = await resolveEnsName({ rpcUrl, timeoutMs: chainConfig().rpcTimeoutMs, universalResolver, name });
  } catch {
    throw chainUnavailable();
  }
  if (!resolved || getAddress(resolved) !== signer) throw unproven(`${name} does not resolve to ${signer}`, 'ENS_NAME_MISMATCH');
  return { attestationUid: null, verifierAddress: signer, metadata: { checked: 'ens-name', ensName: name, message: verificationMessage(agentId), signature } };
}

export async function verify(auth: AuthContext, agentId: string, body: z.infer<ReturnType<typeof VerifyAgentBody>>) {
  await ownAgent(auth, agentId);
  if (body.verificationType === 'webauthn') {
    const passkey = await provePasskey(auth, agentId, body.signature!);
    return storeVerification(auth, agentId, {
      verificationType: 'webauthn',
      attestationUid: null,
      verifierAddress: null,
      verifiedAt: new Date().toISOString(),
      metadata: { checked: 'webauthn-assertion', credentialId: passkey.credentialId, counter: passkey.counter },
    });
  }
  const proof =
    body.verificationType === 'eas'
      ? await easProof(auth, agentId, body.attestationUid as Hex, body.walletAddress, body.signature)
      : body.verificationType === 'coinbase'
        ? await coinbaseProof(agentId, body.signature!, body.walletAddress)
        : await ensProof(agentId, body.signature!, body.walletAddress, body.ensName!);
  return storeVerification(auth, agentId, { verificationType: body.verificationType, verifiedAt: new Date().toISOString(), ...proof });
}

async function storeVerification(auth: AuthContext, agentId: string, record: AgentVerificationRecord) {
  if (!(await setAgentVerification(auth.userId, agentId, record))) throw notFound('agent not found');
  return {
    success: true as const,
    verified: true as const,
    verificationType: record.verificationType,
    attestationUid: record.attestationUid,
    verifiedAt: record.verifiedAt,
  };
}

export async function removeVerification(auth: AuthContext, agentId: string) {
  if (!(await setAgentVerification(auth.userId, agentId, null))) throw notFound('agent not found');
  return { success: true as const };
}
