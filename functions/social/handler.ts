import { socialContract } from '../../shared/contract/social';
import { createHandler } from '../../shared/http/pipeline';
import { socialOperations } from './operations';

export const handler = createHandler(socialContract, { ...socialOperations });
