import { fileStorage } from '#adapters/file-storage';
import { generateImages } from '#domain/ai/images';
import { ownerRights } from '#domain/auth/runtime-agent';
import { visualSynthesizerBodies as bodies } from '#contract/skill-actions/development-creative';
import { usedBytes } from '#data/skills/files';
import { limitReached } from '#platform/errors';
import { action, type SkillModule } from '#domain/skills/skill-module';
import { quotaBytes, storeFile } from './file-manager';

/**
 * `prompt` and `style` → one image from the model layer (domain/ai/images.ts: the plan gate, the
 * provider, the usage record and the credits, as for chat). The image is kept as a file-manager
 * file (folder `visual-synthesizer`, within the storage quota, listed and read back by
 * file-manager) and returned as a signed, expiring download URL of the file storage (S3's
 * presigned GET in AWS, the local server's signed route locally): unguessable, so only the one it
 * was answered to can fetch it, and only until `expiresAt`.
 */
const FOLDER = 'visual-synthesizer';
const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

export const skill: SkillModule = {
  name: 'visual-synthesizer',
  defaultAction: 'generate',
  actions: {
    generate: action(bodies().generate, async (call, body) => {
      const limit = await quotaBytes(call.userId);
      const used = await usedBytes(call.userId);
      // Refused before the model call, so a full storage costs no credits. No plan, no storage: the
      // model layer's plan gate answers that one (402).
      if (limit > 0 && used >= limit) throw limitReached('storage quota reached', 'STORAGE_QUOTA_EXCEEDED', { current: used, limit });
      const rights = await ownerRights(call.userId);
      const generated = await generateImages({
        account: { userId: call.userId, isAdmin: !!rights?.isAdmin, isTester: false },
        agentId: call.agentId,
        prompt: body.style ? `${body.prompt}\n\nStyle: ${body.style}` : body.prompt,
        size: body.size,
        n: 1,
      });
      const image = generated.images[0]!;
      const bytes = Buffer.from(image.bytes);
      const name = `${call.now.toISOString().replace(/[:.]/g, '-')}.${EXTENSIONS[image.mediaType] ?? 'bin'}`;
      const file = await storeFile(call.userId, { name, folder: FOLDER, contentType: image.mediaType }, bytes, call.now, limit);
      const download = await fileStorage().downloadUrl(file.objectKey, { contentType: file.contentType, now: call.now });
      return {
        image: {
          fileId: file.fileId,
          url: download.url,
          urlExpiresAt: download.expiresAt,
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
