/**
 * Warren's JSX runtime (tsconfig `jsxImportSource`): JSX renders straight to an HTML string on
 * the server. Every string child and attribute value is escaped; only an `Html` value (made by
 * `trustedHtml`, for the sanitised markdown renderer's and the highlighter's output) is inserted
 * as markup. Inline event handlers cannot be written at all, and a link to a `javascript:`,
 * `vbscript:` or `data:` URL renders as `#`: user text never becomes script.
 */

/** Markup already safe to insert. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

/** Marks markup as safe: only for the output of a sanitiser or of our own escaping code. */
export const trustedHtml = (markup: string): Html => new Html(markup)

import { escapeHtml } from '../../lib/html'

export { escapeHtml }

export type Child = Html | string | number | boolean | null | undefined | Child[]

function renderChild(child: Child): string {
  if (child === null || child === undefined || typeof child === 'boolean') return ''
  if (child instanceof Html) return child.value
  if (Array.isArray(child)) {
    let out = ''
    for (const c of child) out += renderChild(c)
    return out
  }
  return escapeHtml(String(child))
}

const VOID_ELEMENTS = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr'])
const NAME = /^[a-zA-Z][a-zA-Z0-9:._-]*$/
const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'formaction', 'poster', 'cite'])
/** Schemes a URL attribute may not name (control characters and spaces are ignored by browsers there). */
const UNSAFE_URL = /^(?:javascript|vbscript|data):/i

function renderAttributes(props: Record<string, unknown>): string {
  let out = ''
  // for...in, not Object.entries: no array of pairs made for each element (a page renders thousands).
  for (const key in props) {
    if (!Object.hasOwn(props, key)) continue
    const value = props[key]
    if (key === 'children' || value === null || value === undefined || value === false) continue
    const name = key === 'className' ? 'class' : key === 'htmlFor' ? 'for' : key
    if (!NAME.test(name)) throw new Error(`invalid attribute name: ${name}`)
    if (/^on/i.test(name)) throw new Error(`inline event handlers are not allowed (${name}): scripts are files`)
    if (value === true) {
      out += ` ${name}`
      continue
    }
    let text = String(value)
    if (URL_ATTRIBUTES.has(name.toLowerCase()) && UNSAFE_URL.test(text.replace(/[\u0000-\u0020]/g, ''))) text = '#'
    out += ` ${name}="${escapeHtml(text)}"`
  }
  return out
}

type Component = (props: any) => Html

export function jsx(type: string | Component, props: Record<string, unknown>): Html {
  if (typeof type === 'function') return type(props)
  if (!NAME.test(type)) throw new Error(`invalid element name: ${type}`)
  const open = `<${type}${renderAttributes(props)}>`
  if (VOID_ELEMENTS.has(type)) return new Html(open)
  return new Html(`${open}${renderChild(props.children as Child)}</${type}>`)
}

export const jsxs = jsx
export const jsxDEV = jsx

export function Fragment(props: { children?: Child }): Html {
  return new Html(renderChild(props.children))
}

export namespace JSX {
  export type Element = Html
  export interface ElementChildrenAttribute {
    children: {}
  }
  export interface IntrinsicElements {
    [name: string]: Record<string, unknown>
  }
}
