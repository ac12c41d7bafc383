import { Type, type SchemaOptions, type TLiteral, type TString, type TUnion, type TUnsafe } from '@sinclair/typebox'

/** The message a wrong value gets (the app's 422 reads a schema's `error`). */
const oneOf = (values: readonly string[]) => `must be one of: ${values.map((v) => (v === '' ? '""' : v)).join(', ')}`

/**
 * An enumerated field (state, type, mode, visibility, permission, sort ...): a union of string
 * literals, so the OpenAPI document lists the values and a wrong one is a 422 from the schema
 * that names the field and the values. Include `''` when an empty value means "the default".
 */
export function literals<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    { error: oneOf(values), ...options },
  ) as never
}

/**
 * A record's enumerated field: documented and checked as `literals()`, typed as a plain string
 * so converters can pass a stored value through. `values` must hold every value the code can
 * produce (the answer is checked against it).
 */
export const recordLiterals = (values: readonly string[], options: SchemaOptions = {}): TUnsafe<string> =>
  // Unsafe keeps the union's kind (and so its check) and only changes the static type.
  Type.Unsafe<string>(literals(values, options))

/**
 * An enumerated field Gitea reads leniently: the document lists `values` (`enum`), the schema
 * accepts any string and the service decides (case-insensitive values, unknown sorts that fall
 * back to the default). `pattern`, when given, is still enforced.
 */
export function lenientLiterals(values: readonly string[], options: SchemaOptions & { pattern?: string } = {}): TString {
  return Type.String({ enum: [...values], ...(options.pattern ? { error: oneOf(values) } : {}), ...options })
}

/** A pattern matching `values` whatever their letter case (JSON Schema patterns have no flags). */
export const caseInsensitivePattern = (values: readonly string[]): string =>
  `^(?:${values.map((v) => [...v].map((c) => (c.toLowerCase() !== c.toUpperCase() ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&'))).join('')).join('|')})$`
