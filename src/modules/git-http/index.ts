import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/**
 * Outside /api/v1: git smart HTTP (`/{owner}/{repo}.git/...`) and the web download URLs
 * (`/{owner}/{repo}/raw/...`, `/{owner}/{repo}/archive/...`) (issue 3).
 */
export const gitHttpModule = (deps: AppDeps) => new Elysia({ name: 'git-http', detail: { hide: true } })
