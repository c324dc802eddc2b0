import { oauthSignInContract } from '../../shared/contract/oauth-sign-in';
import { createHandler } from '../../shared/http/pipeline';
import { oauthOperations } from './operations';

export const handler = createHandler(oauthSignInContract, oauthOperations);
