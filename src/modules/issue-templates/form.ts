/**
 * An issue form (a YAML template's fields) as the new issue page shows it and as its answers
 * become the issue's body (Gitea's modules/issue/template RenderToMarkdown): the form's posted
 * names are Gitea's, `form-field-{id}` (a dropdown's chosen option numbers, a checkbox's
 * `form-field-{id}-{n}` ticked "on").
 */
import { ApiError } from '../../lib/errors'
import type { IssueFormField } from './parse'

export type FieldKind = 'markdown' | 'textarea' | 'input' | 'dropdown' | 'checkboxes'
const KINDS: readonly string[] = ['markdown', 'textarea', 'input', 'dropdown', 'checkboxes']

/** A field's text attribute (a string, else empty: Gitea's type assertions). */
export const attr = (field: IssueFormField, name: string): string => (typeof field.attributes[name] === 'string' ? (field.attributes[name] as string) : '')
export const isKnownField = (field: IssueFormField): field is IssueFormField & { type: FieldKind } => KINDS.includes(field.type)
export const isRequired = (field: IssueFormField): boolean => field.validations.required === true

/** A dropdown's options (strings) or a checkbox group's (`label`, `required`, `visible`), by position. */
export function optionsOf(field: IssueFormField): { label: string; required: boolean; visible: string[] | null }[] {
  const options = field.attributes.options
  if (!Array.isArray(options)) return []
  return options.map((o) => {
    if (typeof o === 'string') return { label: field.type === 'dropdown' ? o : '', required: false, visible: null }
    const map = typeof o === 'object' && o !== null ? (o as Record<string, unknown>) : {}
    return {
      label: field.type === 'checkboxes' && typeof map.label === 'string' ? map.label : '',
      required: map.required === true,
      visible: Array.isArray(map.visible) ? map.visible.filter((v): v is string => typeof v === 'string') : null,
    }
  })
}

/** Gitea's default visibility: every field on the form, every field but markdown in the issue's body. */
export const onForm = (field: IssueFormField): boolean => field.visible.length === 0 || field.visible.includes('form')
const inContent = (field: IssueFormField): boolean => (field.visible.length === 0 ? field.type !== 'markdown' : field.visible.includes('content'))

/** The posted values of one name, as the body gives them. */
export type FormValues = (name: string) => string[]
const fieldName = (field: IssueFormField) => `form-field-${field.id}`
const valueOf = (values: FormValues, field: IssueFormField) => (values(fieldName(field))[0] ?? '').replace(/\r\n?/g, '\n').trim()
/** A dropdown's chosen option numbers: repeated values (a multiple select) or Gitea's comma-separated one. */
const chosen = (values: FormValues, field: IssueFormField) => new Set(values(fieldName(field)).flatMap((v) => v.split(',')))
const ticked = (values: FormValues, field: IssueFormField, n: number) => values(`${fieldName(field)}-${n}`)[0] === 'on'

/** Gitea's fence for a rendered textarea: three backquotes, or one more than the longest run opening a line. */
function fence(value: string): string {
  let quotes = '```'
  for (const m of value.matchAll(/^`{3,}/gm)) if (m[0].length >= quotes.length) quotes = m[0] + '`'
  return quotes
}

/**
 * The first required field left empty (a required checkbox unticked), as a message naming it; null
 * when every required one is answered. Gitea's browser enforces these; the server does too.
 */
export function missingAnswer(fields: IssueFormField[], values: FormValues): string | null {
  for (const field of fields) {
    if (!isKnownField(field) || !onForm(field)) continue
    const label = attr(field, 'label') || field.id
    if (field.type === 'checkboxes') {
      const unticked = optionsOf(field).findIndex((o, n) => o.required && !ticked(values, field, n))
      if (unticked >= 0) return `"${label}": "${optionsOf(field)[unticked]!.label}" must be ticked.`
    } else if (field.type === 'dropdown') {
      if (isRequired(field) && ![...chosen(values, field)].some((n) => /^\d+$/.test(n) && Number(n) < optionsOf(field).length)) return `"${label}" needs an answer.`
    } else if (field.type !== 'markdown' && isRequired(field) && !valueOf(values, field)) return `"${label}" needs an answer.`
  }
  return null
}

/** The issue's body from a form's answers (Gitea's RenderToMarkdown): a `### {label}` section a field. */
export function renderAnswers(fields: IssueFormField[], values: FormValues): string {
  const out: string[] = []
  const blank = '_No response_\n'
  for (const field of fields) {
    if (!field.id || !isKnownField(field) || !inContent(field)) continue
    if (field.type !== 'markdown' && field.attributes.hide_label !== true) out.push(`### ${attr(field, 'label')}\n\n`)
    if (field.type === 'checkboxes') {
      optionsOf(field).forEach((o, n) => {
        if (o.visible === null || o.visible.includes('content')) out.push(`- [${ticked(values, field, n) ? 'x' : ' '}] ${o.label}\n`)
      })
    } else if (field.type === 'dropdown') {
      const picked = chosen(values, field)
      const labels = optionsOf(field).filter((_, n) => picked.has(String(n))).map((o) => o.label)
      out.push(labels.length ? `${labels.join(', ')}\n` : blank)
    } else if (field.type === 'input') {
      const value = valueOf(values, field)
      out.push(value ? `${value}\n` : blank)
    } else if (field.type === 'textarea') {
      const value = valueOf(values, field)
      const render = attr(field, 'render')
      const quotes = value && render ? fence(value) : ''
      out.push(!value ? blank : render ? `${quotes}${render}\n${value}\n${quotes}\n` : `${value}\n`)
    } else if (typeof field.attributes.value === 'string') out.push(`${field.attributes.value}\n`)
    out.push('\n')
  }
  return out.join('')
}

/** Largest body a form's answers may make (the API's and the page's body bound). */
export const MAX_ANSWERS_CHARS = 65_536

/** The body a form's answers make, refused (422, nothing written) when a required answer is missing or it is too long. */
export function answersBody(fields: IssueFormField[], values: FormValues): string {
  const missing = missingAnswer(fields, values)
  if (missing) throw new ApiError(422, missing)
  const body = renderAnswers(fields, values)
  if (body.length > MAX_ANSWERS_CHARS) throw new ApiError(422, `The answers make a description longer than ${MAX_ANSWERS_CHARS} characters.`)
  return body
}
