import type { GitHook } from '../modules/git-hooks/service'

/** Gitea's GitHook record. */
export const gitHookToApi = (hook: GitHook) => ({ name: hook.name, is_active: hook.isActive, content: hook.content })
