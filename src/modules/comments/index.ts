import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** Issue comments (issue 5). */
export const commentsModule = (deps: AppDeps) => new Elysia({ name: 'comments', detail: { tags: ['issue'] } })
