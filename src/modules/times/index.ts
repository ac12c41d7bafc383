import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** Tracked time (issue 5). */
export const timesModule = (deps: AppDeps) => new Elysia({ name: 'times', detail: { tags: ['issue'] } })
