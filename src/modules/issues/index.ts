import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** Issues (issue 5). */
export const issuesModule = (deps: AppDeps) => new Elysia({ name: 'issues', detail: { tags: ['issue'] } })
