import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** Site administration: /admin/users ... (issue 2). */
export const adminModule = (deps: AppDeps) => new Elysia({ name: 'admin', detail: { tags: ['admin'] } })
