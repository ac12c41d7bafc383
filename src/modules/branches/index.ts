import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** Branches of a repository (issue 3). */
export const branchesModule = (deps: AppDeps) => new Elysia({ name: 'branches', detail: { tags: ['repository'] } })
