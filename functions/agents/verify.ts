import { getAddress, isHex, recoverMessageAddress, type Hex } from 'viem';
import type * as z from 'zod';
import type { AuthContext } from '../../shared/auth/authenticate';
import type { VerifyAgentBody } from '../../shared/contract/agents';
import { setAgentVerification, type AgentVerificationRecord } from '../../shared/db/agents';
import { badRequest, notFound } from '../../shared/http/errors';
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

export async function verify(auth: AuthContext, agentId: string, body: z.infer<typeof VerifyAgentBody>) {
  await ownAgent(auth, agentId);
  const walletChecked = body.verificationType === 'coinbase' || body.verificationType === 'ens';
  const verifierAddress = walletChecked
    ? await walletSigner(agentId, body.signature!, body.walletAddress)
    : body.walletAddress
      ? getAddress(body.walletAddress)
      : null;
  const record: AgentVerificationRecord = {
    verificationType: body.verificationType,
    attestationUid: body.attestationUid ?? null,
    verifierAddress,
    verifiedAt: new Date().toISOString(),
    metadata: {
      checked: walletChecked ? 'eip191-signature' : 'none',
      message: walletChecked ? verificationMessage(agentId) : null,
      ...(body.signature ? { signature: body.signature } : {}),
    },
  };
  if (!(await setAgentVerification(auth.userId, agentId, record))) throw notFound('agent not found');
  return { success: true as const, verified: true as const, verificationType: record.verificationType, attestationUid: record.attestationUid, verifiedAt: record.verifiedAt };
}

export async function removeVerification(auth: AuthContext, agentId: string) {
  if (!(await setAgentVerification(auth.userId, agentId, null))) throw notFound('agent not found');
  return { success: true as const };
}
