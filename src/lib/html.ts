const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escapes text for an element's content or a quoted attribute value (the JSX runtime's and the highlighter's one rule). */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

const TEXT_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' }

/**
 * Escapes text for an element's content only (never an attribute value): quotes need no escaping
 * there, and code is full of them (the file and diff views, where every byte of a long file counts).
 */
export const escapeText = (text: string): string => text.replace(/[&<>]/g, (c) => TEXT_ESCAPES[c]!)
