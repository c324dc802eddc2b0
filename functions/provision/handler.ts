import { provisionContract } from '../../shared/contract/provision';
import { createHandler } from '../../shared/http/pipeline';
import { provisionWithChannels } from './channels';

export const handler = createHandler(provisionContract, {
  provisionWithChannels: async ({ auth, body }) => provisionWithChannels(auth, body),
});
