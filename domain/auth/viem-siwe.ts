/** What siwe.ts uses of viem, loaded on the first wallet sign-in a container serves, not at a cold start. */
export {
  BaseError,
  encodeDeployData,
  erc6492SignatureValidatorAbi,
  erc6492SignatureValidatorByteCode,
  ExecutionRevertedError,
  getAddress,
  hashMessage,
  isAddressEqual,
  isErc6492Signature,
  recoverMessageAddress,
  size,
} from 'viem';
export { call } from 'viem/actions';
export { createSiweMessage, parseSiweMessage as parseEip4361 } from 'viem/siwe';
