import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** Organisations, members, public members, organisation repositories (issue 4). */
export const orgsModule = (deps: AppDeps) => new Elysia({ name: 'orgs', detail: { tags: ['organization'] } })
