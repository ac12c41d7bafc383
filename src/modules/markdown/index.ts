import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** POST /markdown and /markdown/raw (issue 2). */
export const markdownModule = (deps: AppDeps) => new Elysia({ name: 'markdown', detail: { tags: ['miscellaneous'] } })
