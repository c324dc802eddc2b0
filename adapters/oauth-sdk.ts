/**
 * The parts of oauth4webapi the OAuth sign-in flow calls, imported on its start and callback routes
 * (oauthSdk() in ./oauth-providers.ts), not at init: listing the providers never loads it (issue 16).
 */
export {
  allowInsecureRequests,
  authorizationCodeGrantRequest,
  AuthorizationResponseError,
  calculatePKCECodeChallenge,
  ClientSecretBasic,
  ClientSecretPost,
  generateRandomCodeVerifier,
  generateRandomState,
  getValidatedIdTokenClaims,
  OperationProcessingError,
  processAuthorizationCodeResponse,
  processUserInfoResponse,
  protectedResourceRequest,
  ResponseBodyError,
  skipSubjectCheck,
  userInfoRequest,
  validateAuthResponse,
} from 'oauth4webapi';
