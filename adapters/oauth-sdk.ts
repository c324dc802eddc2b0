/**
 * The parts of oauth4webapi the OAuth sign-in flow calls, imported on its start and callback routes
 * (oauthSdk() in ./oauth-providers.ts), not at init, to keep cold starts light: listing the providers never loads it.
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
