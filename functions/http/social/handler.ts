import { socialContract } from '#contract/social';
import { createHandler } from '#http/pipeline';
import { socialOperations } from './operations';

export const handler = createHandler(socialContract, { ...socialOperations });
