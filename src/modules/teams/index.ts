import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** Teams, team members and team repositories (issue 4). */
export const teamsModule = (deps: AppDeps) => new Elysia({ name: 'teams', detail: { tags: ['organization'] } })
