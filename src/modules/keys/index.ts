import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'

/** SSH keys and GPG keys: /user/keys, /users/{u}/keys, /user/gpg_keys ... (issue 2). */
export const keysModule = (deps: AppDeps) => new Elysia({ name: 'keys', detail: { tags: ['user'] } })
