/**
 * An AWS SDK client whose package is imported on its first use, not at module init: a function
 * whose request does not reach that service never parses or runs the client. `load` is
 * `() => import('#platform/lazy/aws-<service>')`, a wrapper that re-exports by name only what the platform uses
 * (a lazy chunk once bundled). The client is built once and kept, as a static client would be.
 */
export interface LazyClient<Sdk, Client> {
  /** The client and the package's exports (its commands), loading both on the first call. */
  get(): Promise<{ client: Client; sdk: Sdk }>;
  /** Drops the client so the next call builds it again from the current settings (tests). */
  reset(): void;
}

export function lazyClient<Sdk, Client extends { destroy(): void }>(load: () => Promise<Sdk>, create: (sdk: Sdk) => Client): LazyClient<Sdk, Client> {
  let sdk: Sdk | undefined;
  let client: Client | undefined;
  return {
    async get() {
      sdk ??= await load();
      // Assigned without an await in between, so concurrent first calls share one client.
      client ??= create(sdk);
      return { client, sdk };
    },
    reset() {
      client?.destroy();
      client = undefined;
    },
  };
}
