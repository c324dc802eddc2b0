import { provisionContract } from '#contract/provision';
import { createHandler } from '#http/pipeline';
import { envelopeSealer } from '#http/sealed-answers';
import { readStream, rotateStreamKey } from './stream';

/** Provisioning with channels carries the launch and the channel set-up: loaded on its first call, so the stream routes start without it. */
const channels = () => import('./channels');

export const handler = createHandler(
  provisionContract,
  {
    provisionWithChannels: async ({ auth, body }) => (await channels()).provisionWithChannels(auth, body),
    getProvisionedStream: async ({ auth, params }) => readStream(auth, params.id),
    rotateProvisionedStreamKey: async ({ auth, params }) => rotateStreamKey(auth, params.id),
  },
  { answerSealer: envelopeSealer },
);
