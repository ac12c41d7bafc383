import { t } from 'elysia'
import { Int } from '../users/model'

/**
 * `/repos/:owner/:repo/<x>/*`: the wildcard (`*`) is read from the params as they come
 * (Elysia cannot compile a schema with a `*` key, hence additionalProperties).
 */
export const RepoWildcardParams = t.Object({ owner: t.String(), repo: t.String() }, { additionalProperties: true })

/** The wildcard part of the params, still URL-encoded. */
export const wildcardOf = (params: Record<string, unknown>): string => String(params['*'] ?? '')

/** A branch or tag name the wildcard names (decoded, trailing slashes dropped); null when it cannot be decoded. */
export function refNameOf(params: Record<string, unknown>): string | null {
  try {
    return decodeURIComponent(wildcardOf(params)).replace(/\/+$/, '')
  } catch {
    return null
  }
}

/** Raw and archive answers are file bytes, not JSON. */
export const FileBytes = t.Unknown({ description: 'file bytes (streamed)' })

export const EditorConfigSchema = t.Object(
  {
    charset: t.Optional(t.String()),
    indent_style: t.Optional(t.String()),
    indent_size: t.Optional(t.String()),
    tab_width: t.Optional(Int()),
    end_of_line: t.Optional(t.String()),
    trim_trailing_whitespace: t.Optional(t.Boolean()),
    insert_final_newline: t.Optional(t.Boolean()),
  },
  { description: 'EditorConfig definition that applies to a file' },
)
