import { provisionContract } from '../../shared/contract/provision';
import { createHandler } from '../../shared/http/pipeline';
import { envelopeSealer } from '../../shared/http/sealed-answers';
import { provisionWithChannels } from './channels';
import { readStream, rotateStreamKey } from './stream';

export const handler = createHandler(
  provisionContract,
  {
    provisionWithChannels: async ({ auth, body }) => provisionWithChannels(auth, body),
    getProvisionedStream: async ({ auth, params }) => readStream(auth, params.id),
    rotateProvisionedStreamKey: async ({ auth, params }) => rotateStreamKey(auth, params.id),
  },
  { answerSealer: envelopeSealer },
);
