import type { accountsContract } from '#contract/accounts';
import type { Operations } from '#http/pipeline';

export type AccountOperations = Operations<typeof accountsContract>;
/** The typed context of one accounts operation, for the small files that implement them. */
export type AccountsCtx<K extends keyof AccountOperations> = Parameters<NonNullable<AccountOperations[K]>>[0];
