import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** Milestones (issue 5). */
export const milestonesModule = (deps: AppDeps) => new Elysia({ name: 'milestones', detail: { tags: ['issue'] } })
