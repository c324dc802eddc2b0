import * as z from 'zod/mini';
import type { SkillActionBodies } from './index';
import { lazySchema } from '../route';

/**
 * Largest file one upload carries: 512 KiB decoded, so its base64 (about 683 KiB) fits the request
 * body cap (MAX_BODY_BYTES, 1 MiB by default) with room for the other fields.
 */
export const FILE_UPLOAD_MAX_BYTES = 512 * 1024;

/** Largest file one upload by URL carries (the bytes go straight to object storage, not through the API). */
export const FILE_URL_UPLOAD_MAX_BYTES = 100 * 1024 * 1024;

const FileName = lazySchema(() =>
  z.string().check(z.trim(), z.minLength(1), z.maxLength(200), z.regex(/^[^/\\\u0000-\u001f]+$/, 'a file name without slashes or control characters')),
);
const ContentType = lazySchema(() =>
  z._default(z.string().check(z.regex(/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i, 'a media type such as application/pdf')), 'application/octet-stream'),
);

const FileId = lazySchema(() => z.string().check(z.regex(/^file_[0-9a-f]{24}$/, 'a file id')));
const Folder = lazySchema(() =>
  z.string().check(
    z.regex(/^[A-Za-z0-9 _.-]{1,64}(\/[A-Za-z0-9 _.-]{1,64}){0,7}$/, 'folder names of letters, digits, space, _ . -, separated by /'),
    z.refine((f) => !f.split('/').some((part) => part === '.' || part === '..'), 'no . or .. parts'),
  ),
);

export const fileManagerBodies = lazySchema(() => ({
  upload: z
    .strictObject({
      action: z.literal('upload'),
      name: FileName(),
      contentBase64: z
        .base64()
        .check(z.maxLength(Math.ceil(FILE_UPLOAD_MAX_BYTES / 3) * 4 + 4), z.describe(`the file, base64; at most ${FILE_UPLOAD_MAX_BYTES} bytes decoded`)),
      contentType: ContentType(),
      folder: z._default(z.union([z.literal('/'), Folder()]), '/').check(z.describe('/ = the top level')),
    })
    .check(z.describe("store a file within the plan's storage quota (429 with current and limit when full)")),
  upload_url: z
    .strictObject({
      action: z.literal('upload_url'),
      name: FileName(),
      size: z.number().check(z.int(), z.positive(), z.maximum(FILE_URL_UPLOAD_MAX_BYTES), z.describe(`bytes; at most ${FILE_URL_UPLOAD_MAX_BYTES}`)),
      contentType: ContentType(),
      folder: z._default(z.union([z.literal('/'), Folder()]), '/').check(z.describe('/ = the top level')),
    })
    .check(
      z.describe(
        'a presigned URL for one PUT of exactly `size` bytes with the returned headers (valid FILE_UPLOAD_URL_TTL_SECONDS); then `confirm_upload` with the fileId, which counts the file against the quota',
      ),
    ),
  confirm_upload: z
    .strictObject({ action: z.literal('confirm_upload'), fileId: FileId() })
    .check(z.describe('store the file uploaded to the URL of `upload_url` (404 before its PUT, 400 when its size differs, 429 when over the quota)')),
  list: z.strictObject({
    action: z.literal('list'),
    folder: z.optional(z.union([z.literal('/'), Folder()])).check(z.describe('omitted = every file')),
  }),
  get: z.strictObject({ action: z.literal('get'), fileId: FileId() }).check(z.describe('the metadata and the content, base64')),
  delete: z.strictObject({ action: z.literal('delete'), fileId: FileId() }),
  usage: z.strictObject({ action: z.literal('usage') }).check(z.describe('bytes in use and the quota')),
}));

export const fileManagerActions: SkillActionBodies = { bodies: fileManagerBodies, example: { action: 'list', folder: 'press-kit' } };
