import { git, GitError, safeGitMessage, runGit, type GitLimits, type GitRepo } from './run'

/**
 * Talking to other git servers (migrations, pull and push mirrors). The remote address is a user value
 * (after --end-of-options). Credentials never appear in the arguments, a URL or a config file:
 * they travel as an `Authorization: Basic` header set through GIT_CONFIG_COUNT/KEY/VALUE
 * environment variables, visible only to git's own process. Only http(s) and git:// (plus file
 * for local paths an admin may import) are allowed, so `ext::` and friends never run, and HTTP
 * redirects are not followed (they would carry the header, and the address guard, to a host that
 * was never checked).
 */
export interface RemoteAuth {
  username: string
  password: string
}

export interface RemoteOptions {
  auth?: RemoteAuth | null
  /** Allow file:// and local paths (admin imports). */
  allowFile?: boolean
  limits: GitLimits
}

function remoteEnv(opts: RemoteOptions): Record<string, string> {
  const config: [string, string][] = [['http.followRedirects', 'false']]
  if (opts.auth && (opts.auth.username || opts.auth.password)) {
    const basic = Buffer.from(`${opts.auth.username}:${opts.auth.password}`).toString('base64')
    config.push(['http.extraHeader', `Authorization: Basic ${basic}`])
  }
  const env: Record<string, string> = {
    GIT_ALLOW_PROTOCOL: opts.allowFile ? 'http:https:git:file' : 'http:https:git',
    GIT_CONFIG_COUNT: String(config.length),
  }
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key
    env[`GIT_CONFIG_VALUE_${i}`] = value
  })
  return env
}

/** Git's error line with any trace of the password removed. */
function scrubbed(message: string, auth: RemoteAuth | null | undefined): string {
  let text = message
  if (auth?.password) text = text.split(auth.password).join('********')
  // Whatever user-info a URL in the message carries.
  return text.replace(/(\w+:\/\/)[^/\s@]*@/g, '$1')
}

function failure(kind: 'failed', stderr: string, command: string, auth: RemoteAuth | null | undefined): GitError {
  return new GitError(kind, scrubbed(safeGitMessage(stderr), auth), command)
}

/**
 * The branch the remote's HEAD points at (null when it has none, e.g. an empty repository),
 * and whether it has any branch at all. Also proves the remote is reachable with these
 * credentials before anything is created.
 */
export async function remoteHead(url: string, opts: RemoteOptions): Promise<{ head: string | null; branches: number }> {
  const r = await runGit(['ls-remote', '--symref'], {
    values: [url, 'HEAD', 'refs/heads/*'],
    env: remoteEnv(opts),
    budget: 'long',
    limits: opts.limits,
    cwd: '/',
  }).catch((e) => {
    if (e instanceof GitError) throw new GitError(e.kind, scrubbed(e.message, opts.auth), e.command)
    throw e
  })
  if (r.code !== 0) throw failure('failed', r.stderr, 'ls-remote', opts.auth)
  const out = r.stdout.toString('utf8')
  const head = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(out)?.[1] ?? null
  const branches = out.split('\n').filter((l) => /^[0-9a-f]{40,64}\trefs\/heads\//.test(l)).length
  return { head, branches }
}

/**
 * Fetches every branch and tag of the remote into a bare repository, mirroring it: refs that
 * moved are forced, refs gone from the remote are pruned.
 */
export async function fetchMirror(repo: GitRepo, url: string, opts: RemoteOptions): Promise<void> {
  await mirrorRefs(repo, ['fetch', '--prune', '--quiet', '--no-write-fetch-head', '--no-auto-gc'], url, opts)
}

/**
 * Pushes every branch and tag of a bare repository to the remote, mirroring it there (a push
 * mirror): refs that moved are forced, the remote's branches and tags gone here are deleted.
 * Nothing else (`refs/pull/`, notes) is pushed.
 */
export async function pushMirror(repo: GitRepo, url: string, opts: RemoteOptions): Promise<void> {
  await mirrorRefs(repo, ['push', '--force', '--prune', '--quiet', '--no-verify'], url, opts)
}

/** `git fetch` or `git push` of every branch and tag between the repository and `url`; errors scrubbed. */
async function mirrorRefs(repo: GitRepo, command: string[], url: string, opts: RemoteOptions): Promise<void> {
  try {
    await git(command, {
      gitDir: repo.gitDir,
      values: [url, '+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'],
      env: remoteEnv(opts),
      budget: 'long',
      limits: opts.limits,
      signal: repo.signal,
    })
  } catch (e) {
    if (e instanceof GitError) throw new GitError(e.kind, scrubbed(e.message, opts.auth), e.command)
    throw e
  }
}
