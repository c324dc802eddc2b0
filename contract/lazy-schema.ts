/**
 * A schema built when it is first needed, not when its module loads. Building a zod schema node is
 * costly while the code is still cold, so a module that builds its schemas at import makes every
 * cold start of every function that loads it pay for them, needed or not (docs/architecture.md §11).
 * The contract (contract/route.ts) and the adapters that validate outside answers use it.
 */
const LAZY_SCHEMA = Symbol('lazySchema');

/** A schema built once, on its first call, and then always the same object. */
export type LazySchema<S> = (() => S) & { readonly [LAZY_SCHEMA]: true };

export function lazySchema<S>(build: () => S): LazySchema<S> {
  let built: { schema: S } | undefined;
  const get = () => (built ??= { schema: build() }).schema;
  return Object.assign(get, { [LAZY_SCHEMA]: true as const });
}

export const isLazySchema = (value: unknown): value is LazySchema<unknown> => typeof value === 'function' && LAZY_SCHEMA in value;
