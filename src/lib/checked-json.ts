import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { ValidationError } from 'elysia'

/**
 * An answer checked as Elysia checks one against its schema (extra properties dropped, then a
 * ValidationError on a mismatch) and serialised: for answers kept as JSON text (cached pages),
 * which go out as a Response Elysia does not check. The checker is compiled on first use, not
 * when the module loads: compiling a large record's schema is a visible share of start-up.
 */
export function checkedJson<T extends TSchema>(schema: T): (value: unknown) => string {
  const checker = compiledAtFirstUse(schema)
  return (value) => {
    Value.Clean(schema, value)
    const check = checker()
    if (!check.Check(value)) throw new ValidationError('response', check, value)
    return JSON.stringify(value)
  }
}

/**
 * TypeBox's compiled checker of `schema`, compiled when first asked for, not when the module
 * loads (compiling is generated code: a visible share of start-up across many schemas).
 */
export function compiledAtFirstUse<T extends TSchema>(schema: T): () => TypeCheck<T> {
  let check: TypeCheck<T> | undefined
  return () => (check ??= TypeCompiler.Compile(schema))
}

/** The content type Elysia gives the records it serialises. */
export const JSON_TYPE = 'application/json;charset=utf-8'

/** An answer of JSON text (what checkedJson made), with the header Elysia gives the records it serialises. */
export const jsonText = (text: string): Response => new Response(text, { headers: { 'content-type': JSON_TYPE } })
