import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** Repository labels and issue labels (issue 5). */
export const labelsModule = (deps: AppDeps) => new Elysia({ name: 'labels', detail: { tags: ['issue'] } })
