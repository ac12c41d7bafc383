import type { HLJSApi } from 'highlight.js'

let loaded: HLJSApi | undefined
/**
 * highlight.js, loaded when first needed, which is in a render worker only (lib/highlight.ts
 * `highlightLines` takes it as an argument): only the render worker imports this module, so
 * highlight.js (a quarter of a megabyte of code, and its grammars a large share of a start's time
 * and memory) is neither read nor parsed by the main thread, and in a worker it is evaluated at
 * the first file highlighted (a synchronous require), not at the worker's start.
 */
export function highlighter(): HLJSApi {
  if (!loaded) {
    const mod = require('highlight.js/lib/common')
    loaded = (mod.default ?? mod) as HLJSApi
  }
  return loaded
}
