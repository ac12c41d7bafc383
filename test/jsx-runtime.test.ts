// runs in one half: sqlite
import { describe, expect, test } from 'bun:test'
import { jsx, trustedHtml } from '../src/web/jsx/jsx-runtime'

/**
 * The web pages' JSX runtime (src/web/jsx/jsx-runtime.ts) renders to HTML strings: what it makes of
 * attributes and children, and what it refuses, checked on the runtime itself (the pages' tests
 * read it through whole pages).
 */
describe('the JSX runtime', () => {
  test('attributes: values escaped, className as class, true as a bare attribute, false, null and undefined left out', () => {
    const html = jsx('a', { className: 'x "y"', href: '/a?b=1&c=2', hidden: true, title: false, id: null, lang: undefined, children: 'go' }).value
    expect(html).toBe('<a class="x &quot;y&quot;" href="/a?b=1&amp;c=2" hidden>go</a>')
  })

  test("only the props' own keys are attributes (not inherited ones)", () => {
    const props = Object.create({ inherited: 'no' }) as Record<string, unknown>
    props.title = 'own'
    expect(jsx('span', props).value).toBe('<span title="own"></span>')
  })

  test('a script URL renders as #, whatever its case and control characters; an inline handler is refused', () => {
    expect(jsx('a', { href: ' Java\tScript:alert(1)', children: 'x' }).value).toBe('<a href="#">x</a>')
    expect(jsx('img', { src: 'data:text/html,x' }).value).toBe('<img src="#">')
    expect(() => jsx('button', { onClick: 'alert(1)' })).toThrow(/inline event handlers/)
    expect(() => jsx('div', { 'bad name': 1 })).toThrow(/invalid attribute name/)
  })

  test('children: text escaped, trusted markup as is, arrays flattened, booleans and nulls left out', () => {
    const html = jsx('p', { children: ['<b>', trustedHtml('<i>ok</i>'), [1, null, false, [' & ']], undefined] }).value
    expect(html).toBe('<p>&lt;b&gt;<i>ok</i>1 &amp; </p>')
  })
})
