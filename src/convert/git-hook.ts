/** A repository's git hook as read from its folder (src/modules/git-hooks): its name, whether it is set, its program. */
export interface GitHookFile {
  name: string
  isActive: boolean
  content: string
}

/** Gitea's GitHook record. */
export const gitHookToApi = (hook: GitHookFile) => ({ name: hook.name, is_active: hook.isActive, content: hook.content })
