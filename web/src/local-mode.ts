import { signal } from '@preact/signals';
import { api } from './api';

/**
 * The local stack's mail viewer, where the mails it "sends" can be opened (the confirmation link among
 * them): undefined everywhere else. Read from the public sign-in configuration, which the local
 * server marks as local; the one place that knows the field's name.
 */
export const localMailUrl = signal<string | undefined>(undefined);

export async function loadLocalMode(): Promise<void> {
  const { data } = await api.GET('/api/auth/providers').catch(() => ({ data: undefined }));
  const url = data?.localMailUrl;
  // A path on this origin only: the console never links a visitor to another site from here.
  localMailUrl.value = url?.startsWith('/') && !url.startsWith('//') ? url : undefined;
}
