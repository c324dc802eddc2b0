import type { settingsContract } from '#contract/settings';
import type { Operations } from '#http/pipeline';

export type SettingsOperations = Operations<typeof settingsContract>;
/** The typed context of one settings operation, for the small files that implement them. */
export type SettingsCtx<K extends keyof SettingsOperations> = Parameters<NonNullable<SettingsOperations[K]>>[0];
