/**
 * Bundles only (build/substitutes.ts): `zod/v3` as @ai-sdk/provider-utils uses it. The AI SDK imports
 * nothing of zod 3 but this enum, to read the `_def.typeName` of a zod 3 schema it converts to JSON
 * Schema; the conversion reads the schema object itself and needs no zod 3 runtime. This platform's
 * schemas are all zod 4, which never take that path. The same names and values as zod 3's own enum,
 * without the rest of zod 3 the real module brings (its weight: docs/architecture.md §11).
 */
const TYPE_NAMES = [
  'ZodString',
  'ZodNumber',
  'ZodNaN',
  'ZodBigInt',
  'ZodBoolean',
  'ZodDate',
  'ZodSymbol',
  'ZodUndefined',
  'ZodNull',
  'ZodAny',
  'ZodUnknown',
  'ZodNever',
  'ZodVoid',
  'ZodArray',
  'ZodObject',
  'ZodUnion',
  'ZodDiscriminatedUnion',
  'ZodIntersection',
  'ZodTuple',
  'ZodRecord',
  'ZodMap',
  'ZodSet',
  'ZodFunction',
  'ZodLazy',
  'ZodLiteral',
  'ZodEnum',
  'ZodEffects',
  'ZodNativeEnum',
  'ZodOptional',
  'ZodNullable',
  'ZodDefault',
  'ZodCatch',
  'ZodPromise',
  'ZodBranded',
  'ZodPipeline',
  'ZodReadonly',
] as const;

export const ZodFirstPartyTypeKind = Object.freeze(Object.fromEntries(TYPE_NAMES.map((name) => [name, name]))) as {
  readonly [K in (typeof TYPE_NAMES)[number]]: K;
};
