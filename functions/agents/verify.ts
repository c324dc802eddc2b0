import { getAddress, isHex, recoverMessageAddress, type Hex } from 'viem';
import type * as z from 'zod';
import { readAttestation, type Attestation } from '../../shared/adapters/eas';
import type { AuthContext } from '../../shared/auth/authenticate';
import { config } from '../../shared/config';
import type { VerifyAgentBody } from '../../shared/contract/agents';
import { setAgentVerification, type AgentVerificationRecord } from '../../shared/db/agents';
import { badRequest, HttpError, notFound } from '../../shared/http/errors';
import { ownAgent } from './read';

/** The message a wallet signs (EIP-191 personal_sign) to verify an agent; bound to the agent id. */
export const verificationMessage = (agentId: string) => `Verify agent ${agentId} on the agent platform`;

const UNVERIFIED = { verified: false, verificationType: null, attestationUid: null, verifierAddress: null, verifiedAt: null, metadata: null } as const;

export async function readVerification(auth: AuthContext, agentId: string) {
  const v = (await ownAgent(auth, agentId)).verification;
  return v ? { verified: true as const, ...v } : UNVERIFIED;
}

const failed = (why: string) => badRequest(`verification failed: ${why}`, 'VERIFICATION_FAILED');

/** Recovers the EIP-191 signer of the agent's message; must equal `walletAddress` when that is given. */
async function walletSigner(agentId: string, signature: string, walletAddress: string | undefined): Promise<string> {
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

const unproven = (message: string, code: string) => new HttpError(422, message, code);

/** Reads the attestation on chain and refuses anything that does not prove `recipient` holds it under the configured schema. */
async function checkedAttestation(uid: Hex, recipient: string): Promise<Attestation> {
  const { schemaUid, rpcUrl, contractAddress } = config().eas;
  if (!schemaUid || !rpcUrl) throw new HttpError(503, 'EAS verification is not configured on this platform', 'EAS_NOT_CONFIGURED');
  let attestation: Attestation;
  try {
    attestation = await readAttestation({ rpcUrl, timeoutMs: config().chain.rpcTimeoutMs, contract: contractAddress, uid });
  } catch {
    throw new HttpError(503, 'the attestation cannot be read from the chain right now; try again', 'CHAIN_UNAVAILABLE');
  }
  if (BigInt(attestation.uid) === 0n || attestation.uid.toLowerCase() !== uid.toLowerCase())
    throw unproven(`attestation ${uid} does not exist`, 'ATTESTATION_NOT_FOUND');
  if (attestation.revocationTime !== 0n) throw unproven('the attestation has been revoked', 'ATTESTATION_REVOKED');
  if (attestation.expirationTime !== 0n && attestation.expirationTime <= BigInt(Math.floor(Date.now() / 1000)))
    throw unproven('the attestation has expired', 'ATTESTATION_EXPIRED');
  if (attestation.schema.toLowerCase() !== schemaUid.toLowerCase())
    throw unproven(`the attestation is not of schema ${schemaUid}`, 'ATTESTATION_SCHEMA_MISMATCH');
  if (getAddress(attestation.recipient) !== getAddress(recipient))
    throw unproven(`the attestation's recipient is not ${getAddress(recipient)}`, 'ATTESTATION_RECIPIENT_MISMATCH');
  return attestation;
}

export async function verify(auth: AuthContext, agentId: string, body: z.infer<typeof VerifyAgentBody>) {
  await ownAgent(auth, agentId);
  if (body.verificationType === 'webauthn') {
    // No passkey registration exists yet to verify an assertion against; an unchecked assertion proves nothing.
    throw unproven('webauthn verification is not available yet: there is no registered passkey to check the assertion against', 'WEBAUTHN_UNAVAILABLE');
  }
  const walletChecked = body.verificationType === 'coinbase' || body.verificationType === 'ens';
  const attestation = body.verificationType === 'eas' ? await checkedAttestation(body.attestationUid as Hex, body.walletAddress!) : null;
  const verifierAddress = walletChecked ? await walletSigner(agentId, body.signature!, body.walletAddress) : getAddress(body.walletAddress!);
  const record: AgentVerificationRecord = {
    verificationType: body.verificationType,
    attestationUid: body.attestationUid ?? null,
    verifierAddress,
    verifiedAt: new Date().toISOString(),
    metadata: attestation
      ? {
          checked: 'eas-attestation',
          schema: attestation.schema,
          attester: getAddress(attestation.attester),
          attestedAt: new Date(Number(attestation.time) * 1000).toISOString(),
        }
      : { checked: 'eip191-signature', message: verificationMessage(agentId), signature: body.signature },
  };
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
