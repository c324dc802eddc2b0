import * as z from 'zod/mini';
import { MESSAGE_EVENT_TYPE } from '../webhook-events';
import type { SkillActionBodies } from './index';
import { lazySchema } from '../route';

/**
 * Request bodies of the development and creative skills: `webhook` and `browser` (development),
 * `visual-synthesizer` (creative). Both development skills reach user-supplied URLs only through
 * the guarded fetch (adapters/guarded-fetch.ts): http(s), public addresses only, redirects re-checked.
 */

export const BROWSER_TEXT_DEFAULT_CHARS = 20_000;
export const BROWSER_TEXT_MAX_CHARS = 100_000;
export const BROWSER_MAX_LINKS = 200;

const PageUrl = lazySchema(() => z.string().check(z.trim(), z.maxLength(2048), z.regex(/^https?:\/\//i, 'an http(s) URL')));

export const browserBodies = lazySchema(() => ({
  fetch: z
    .strictObject({
      action: z.literal('fetch'),
      url: PageUrl(),
      maxChars: z
        ._default(z.number().check(z.int(), z.minimum(100), z.maximum(BROWSER_TEXT_MAX_CHARS)), BROWSER_TEXT_DEFAULT_CHARS)
        .check(z.describe('longest text returned; a longer page is cut and `textTruncated` says so')),
    })
    .check(z.describe(`the page's title, readable text (scripts and styles dropped) and links as absolute URLs (at most ${BROWSER_MAX_LINKS})`)),
}));

export const browserActions: SkillActionBodies = { bodies: browserBodies, example: { action: 'fetch', url: 'https://example.com/news' } };

const EndpointId = lazySchema(() => z.string().check(z.regex(/^whe_[A-Za-z0-9_-]{12}$/, 'an endpoint id (whe_...)')));
/** The Standard Webhooks message id: stable across retries, so receivers can drop duplicates. */
const MessageId = lazySchema(() => z.string().check(z.regex(/^msg_[A-Za-z0-9_-]{8,64}$/, 'msg_ followed by 8 to 64 letters, digits, _ or -')));

export const webhookBodies = lazySchema(() => ({
  register: z
    .strictObject({ action: z.literal('register'), url: PageUrl() })
    .check(z.describe('register an endpoint (the signing secret is shown once, here); the URL must reach the public internet')),
  list: z.strictObject({ action: z.literal('list') }),
  remove: z.strictObject({ action: z.literal('remove'), endpointId: EndpointId() }),
  send: z
    .strictObject({
      action: z.literal('send'),
      endpointId: EndpointId(),
      type: z.string().check(z.regex(MESSAGE_EVENT_TYPE, 'a dotted event type such as show.announced'), z.describe('the event type receivers see')),
      payload: z.record(z.string().check(z.maxLength(64)), z.json()).check(z.describe('the event data (JSON object)')),
      id: z.optional(MessageId()).check(z.describe('message id; repeating one does not send again (safe retries). Default: a new id')),
    })
    .check(z.describe('queue one signed delivery (Standard Webhooks); failures are retried through the events queue')),
  deliveries: z
    .strictObject({
      action: z.literal('deliveries'),
      endpointId: EndpointId(),
      limit: z._default(z.number().check(z.int(), z.minimum(1), z.maximum(100)), 20),
      cursor: z.optional(z.string().check(z.maxLength(2048))),
    })
    .check(z.describe('the delivery log of an endpoint, newest first: every attempt with its outcome')),
}));

export const webhookActions: SkillActionBodies = {
  bodies: webhookBodies,
  example: { action: 'send', endpointId: 'whe_AbCdEfGhIjKl', type: 'show.announced', payload: { city: 'Leeds' } },
};

export const IMAGE_SIZES = ['1024x1024', '1024x1536', '1536x1024'] as const;

export const visualSynthesizerBodies = lazySchema(() => ({
  generate: z
    .strictObject({
      // The spec's body is just prompt and style: the one action may go unnamed.
      action: z.optional(z.literal('generate')),
      prompt: z.string().check(z.trim(), z.minLength(1), z.maxLength(2000), z.describe('what the image shows')),
      style: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200))).check(z.describe('the look: synthwave, watercolour, 35 mm photo...')),
      size: z._default(z.enum(IMAGE_SIZES), '1024x1024'),
    })
    .check(z.describe("an image from the model layer's image generation (plan-gated, metered like chat), kept in the file-manager storage")),
}));

export const visualSynthesizerActions: SkillActionBodies = {
  bodies: visualSynthesizerBodies,
  example: { prompt: 'Neon skyline over a crowded dance floor', style: 'synthwave' },
};
