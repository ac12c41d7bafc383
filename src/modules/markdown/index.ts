import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { MARKUP_MODES, MarkdownOption, MarkdownRawBody, MarkdownRender, MarkupOption } from './model'
import { renderMarkdown } from './service'
import { contextBranch } from './context'
import { readsBody } from '../../lib/body'
import { ApiError } from '../../lib/errors'

const HTML = 'text/html; charset=UTF-8'

/** POST /markdown (JSON MarkdownOption) and /markdown/raw (the markdown itself as the body). */
export const markdownModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['miscellaneous'] })
    .post(
      '/markdown',
      async ({ body, set, request, caller }) => {
        set.headers['content-type'] = HTML
        const context = body.Context ?? body.context
        const mode = body.Mode ?? body.mode
        const wiki = body.Wiki ?? body.wiki
        const opts = { mode, context, wiki, branch: await contextBranch(deps, caller.user, { mode, wiki, context }) }
        return renderMarkdown(deps.config, body.Text ?? body.text ?? '', opts, deps.auth.clientAddress(request))
      },
      {
        scope: 'none',
        caller: true,
        // A `null` body is an empty MarkdownOption, as in Gitea (non-object bodies are refused by
        // the app's body parser for every route).
        transform: (ctx) => {
          if (ctx.body === null || ctx.body === undefined) ctx.body = {}
        },
        body: MarkdownOption,
        response: { 200: MarkdownRender },
        detail: {
          operationId: 'renderMarkdown',
          'x-content-type': 'text/html',
          summary: 'Render a markdown document as HTML',
        },
      },
    )
    .post(
      '/markup',
      async ({ body, set, request, caller }) => {
        const wiki = body.Wiki ?? body.wiki
        const given = (body.Mode ?? body.mode ?? '').toLowerCase()
        if (!(MARKUP_MODES as readonly string[]).includes(given)) throw new ApiError(422, `Unknown mode: ${given}`)
        // Gitea's rule: `Wiki` makes the mode `wiki`; every mode but plain markdown resolves
        // references and links against the context, as /markdown's `gfm` does.
        const plain = !wiki && (given === '' || given === 'markdown')
        const context = body.Context ?? body.context
        const mode = plain ? 'markdown' : 'gfm'
        const linksToWiki = wiki || given === 'wiki'
        const opts = { mode, context, wiki: linksToWiki, branch: await contextBranch(deps, caller.user, { mode, wiki: linksToWiki, context }) }
        set.headers['content-type'] = HTML
        return renderMarkdown(deps.config, body.Text ?? body.text ?? '', opts, deps.auth.clientAddress(request))
      },
      {
        scope: 'none',
        caller: true,
        transform: (ctx) => {
          if (ctx.body === null || ctx.body === undefined) ctx.body = {}
        },
        body: MarkupOption,
        response: { 200: MarkdownRender },
        detail: {
          operationId: 'renderMarkup',
          'x-content-type': 'text/html',
          summary: 'Render a markup document as HTML',
        },
      },
    )
    .post(
      '/markdown/raw',
      async ({ body, set, request }) => {
        set.headers['content-type'] = HTML
        return renderMarkdown(deps.config, body, {}, deps.auth.clientAddress(request))
      },
      {
        scope: 'none',
        body: MarkdownRawBody,
        response: { 200: MarkdownRender },
        detail: {
          // The body is the markdown whatever the Content-Type says: read as text, never as JSON.
          ...readsBody('text'),
          operationId: 'renderMarkdownRaw',
          'x-content-type': 'text/html',
          summary: 'Render raw markdown as HTML',
          requestBody: { required: true, content: { 'text/plain': { schema: { type: 'string' } } } },
        },
      },
    )
