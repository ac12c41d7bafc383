import sanitizeHtml from 'sanitize-html'

/**
 * What rendered markdown may keep (the renderer passes raw HTML through): Gitea's sanitiser
 * policy in spirit, no scripts, styles, event handlers, forms or foreign URL schemes.
 */
export const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'br', 'hr', 'blockquote', 'pre', 'code', 'kbd', 'samp', 'var',
    'em', 'strong', 'b', 'i', 'u', 's', 'del', 'ins', 'mark', 'sub', 'sup', 'small', 'abbr', 'q', 'cite', 'dfn',
    'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'a', 'img', 'input', 'table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td',
    'caption', 'colgroup', 'col', 'details', 'summary', 'div', 'span', 'figure', 'figcaption', 'picture', 'ruby', 'rt', 'rp',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'name', 'id', 'class', 'rel'],
    img: ['src', 'alt', 'title', 'width', 'height', 'align'],
    input: ['type', 'checked', 'disabled'],
    code: ['class'],
    th: ['align', 'colspan', 'rowspan'],
    td: ['align', 'colspan', 'rowspan'],
    ol: ['start', 'type'],
    li: ['value'],
    details: ['open'],
    h1: ['id'], h2: ['id'], h3: ['id'], h4: ['id'], h5: ['id'], h6: ['id'],
    div: ['align'], p: ['align'], abbr: ['title'], q: ['cite'], col: ['span'], colgroup: ['span'],
  },
  allowedClasses: { a: ['ref-issue', 'mention'], code: [/^language-[\w+#.-]+$/] as any },
  allowedSchemes: ['http', 'https', 'mailto', 'ftp'],
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  allowProtocolRelative: true,
  // Only task-list checkboxes survive, and they stay read-only.
  exclusiveFilter: (frame) => frame.tag === 'input' && frame.attribs.type !== 'checkbox',
  transformTags: {
    input: (tagName, attribs) => ({ tagName, attribs: { ...attribs, disabled: '' } }),
  },
}

export const sanitize = (html: string) => sanitizeHtml(html, SANITIZE)
