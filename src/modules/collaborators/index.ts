import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** Repository collaborators (issue 3). */
export const collaboratorsModule = (deps: AppDeps) => new Elysia({ name: 'collaborators', detail: { tags: ['repository'] } })
