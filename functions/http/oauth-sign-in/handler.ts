import { oauthSignInContract } from '#contract/oauth-sign-in';
import { createHandler } from '#http/pipeline';
import { oauthOperations } from './operations';

export const handler = createHandler(oauthSignInContract, oauthOperations);
