import { createHash } from 'node:crypto';
import { fileStorage, objectKeyOf } from '../../../shared/adapters/file-storage';
import { generateImages } from '../../../shared/ai/model-layer';
import { isAdminEmail } from '../../../shared/auth/authenticate';
import { visualSynthesizerBodies as bodies } from '../../../shared/contract/skill-actions/development-creative';
import { addFile, StorageQuotaError, usedBytes, type StoredFile } from '../../../shared/db/skills/files';
import { newRecordId } from '../../../shared/db/skills/records';
import { getUser } from '../../../shared/db/users';
import { HttpError } from '../../../shared/http/errors';
import { action, type SkillModule } from '../skill-module';
import { quotaBytes } from './file-manager';

/**
 * `prompt` and `style` → one image from the model layer (shared/ai/images.ts: the plan gate, the
 * provider, the usage record and the credits, as for chat). The image is kept as a file-manager
 * file (folder `visual-synthesizer`, within the storage quota, listed and read back by
 * file-manager) and returned as a `data:` URL of its bytes: no route serves stored files over
 * HTTP yet, so a fetchable link waits for the object store's presigned URLs.
 */
const FOLDER = 'visual-synthesizer';
const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

const quotaError = (current: number, limit: number, size?: number) =>
  new HttpError(429, 'storage quota reached', 'STORAGE_QUOTA_EXCEEDED', { current, limit, ...(size === undefined ? {} : { size }) });

export const skill: SkillModule = {
  name: 'visual-synthesizer',
  defaultAction: 'generate',
  actions: {
    generate: action(bodies.generate, async (call, body) => {
      const limit = await quotaBytes(call.userId);
      const used = await usedBytes(call.userId);
      // Refused before the model call, so a full storage costs no credits. No plan, no storage: the
      // model layer's plan gate answers that one (402).
      if (limit > 0 && used >= limit) throw quotaError(used, limit);
      const user = await getUser(call.userId);
      const generated = await generateImages({
        account: { userId: call.userId, isAdmin: !!user && isAdminEmail(user.email), isTester: false },
        agentId: call.agentId,
        prompt: body.style ? `${body.prompt}\n\nStyle: ${body.style}` : body.prompt,
        size: body.size,
        n: 1,
      });
      const image = generated.images[0]!;
      const bytes = Buffer.from(image.bytes);
      const fileId = newRecordId('file');
      const file: StoredFile = {
        fileId,
        name: `${call.now.toISOString().replace(/[:.]/g, '-')}.${EXTENSIONS[image.mediaType] ?? 'bin'}`,
        folder: FOLDER,
        contentType: image.mediaType,
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        objectKey: objectKeyOf(call.userId, fileId),
        uploadedAt: call.now.toISOString(),
      };
      await fileStorage().put(file.objectKey, bytes, file.contentType);
      try {
        await addFile(call.userId, file, limit);
      } catch (err) {
        await fileStorage().delete(file.objectKey);
        if (err instanceof StorageQuotaError) throw quotaError(await usedBytes(call.userId), limit, file.size);
        throw err;
      }
      return {
        image: {
          fileId,
          url: `data:${file.contentType};base64,${bytes.toString('base64')}`,
          contentType: file.contentType,
          size: file.size,
          sha256: file.sha256,
          folder: FOLDER,
          name: file.name,
        },
        prompt: body.prompt,
        style: body.style ?? null,
        size: body.size,
        model: generated.model,
        usage: generated.usage,
        costUsd: generated.costUsd,
        creditsCharged: generated.creditsCharged,
      };
    }),
  },
};
