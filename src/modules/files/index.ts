import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** Raw files, archives and editorconfig under /repos/{o}/{r} (issue 3). */
export const filesModule = (deps: AppDeps) => new Elysia({ name: 'files', detail: { tags: ['repository'] } })
