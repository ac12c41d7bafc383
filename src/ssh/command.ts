import type { GitSessionService } from '../git/smart-http'

/**
 * The command an SSH client asks to run, as git sends it: `git-upload-pack 'owner/repo.git'`
 * (the path single-quoted by git's sq_quote, so `'` comes as `'\''` and `!` as `'\!'`), also
 * `git upload-pack` with a space, a double-quoted or bare path, with or without a leading `/`
 * and `.git`. Anything else is refused with a message for the client.
 */
export interface GitCommand {
  service: GitSessionService
  ownerName: string
  repoName: string
  /**
   * `git-lfs-authenticate {path} upload|download`: no git process, a token for the LFS endpoints
   * (ssh/lfs-authenticate.ts), under the access decision of a push (`upload`) or a fetch.
   */
  lfs?: 'upload' | 'download'
}

/** Text from a client, made safe to echo back to its terminal (no control characters). */
export const printable = (text: string, max = 200) => text.slice(0, max).replace(/[^\x20-\x7e]/g, '?')

/** Longest command line taken (git's are a few dozen bytes). */
export const MAX_COMMAND_LENGTH = 1024

const SERVICES: Record<string, GitSessionService> = {
  'git-upload-pack': 'upload-pack',
  'git-receive-pack': 'receive-pack',
  'git-upload-archive': 'upload-archive',
}

/** Git LFS's command asking for a token of the LFS endpoints over SSH. */
const LFS_AUTHENTICATE = 'git-lfs-authenticate'

/** One owner or repository name in a path: what user and repository names may be. */
const NAME = /^[A-Za-z0-9_.-]{1,255}$/

/**
 * The one argument after the verb: shell-like quoting as git and other clients write it
 * (single quotes with `\x` between them, double quotes with `\"` and `\\`, or bare). Null when
 * it is not exactly one argument.
 */
function unquoteArgument(text: string): string | null {
  let out = ''
  let i = 0
  let quoted = false
  while (i < text.length) {
    const c = text[i]!
    if (c === "'") {
      const end = text.indexOf("'", i + 1)
      if (end < 0) return null
      out += text.slice(i + 1, end)
      i = end + 1
      quoted = true
    } else if (c === '"') {
      i++
      for (;;) {
        if (i >= text.length) return null
        const d = text[i]!
        if (d === '"') break
        if (d === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) i++
        out += text[i]
        i++
      }
      i++
      quoted = true
    } else if (c === '\\') {
      if (i + 1 >= text.length) return null
      out += text[i + 1]
      i += 2
    } else if (/\s/.test(c)) {
      return null
    } else {
      out += c
      i++
    }
  }
  return out || quoted ? out : null
}

/** The git command a client asked for, or the message that refuses it. */
export function parseGitCommand(command: string): GitCommand | { refusal: string } {
  if (command.length > MAX_COMMAND_LENGTH) return { refusal: 'the command is too long' }
  let text = command.trim()
  if (text.startsWith('git ')) text = 'git-' + text.slice(4).trimStart()
  const space = text.search(/\s/)
  const verb = space < 0 ? text : text.slice(0, space)
  let rest = space < 0 ? '' : text.slice(space).trim()
  let lfs: GitCommand['lfs']
  if (verb === LFS_AUTHENTICATE) {
    // The operation is the last word; the path before it, quoted or bare.
    const operation = /\s(upload|download)$/.exec(rest)
    if (!operation) return { refusal: `${verb} takes a repository path and upload or download, such as 'owner/repository.git' download` }
    lfs = operation[1] as 'upload' | 'download'
    rest = rest.slice(0, operation.index).trim()
  }
  const service = lfs ? (lfs === 'upload' ? 'receive-pack' : 'upload-pack') : Object.hasOwn(SERVICES, verb) ? SERVICES[verb] : undefined
  if (!service) return { refusal: `unknown command "${printable(verb, 100)}": only git-upload-pack, git-receive-pack, git-upload-archive and git-lfs-authenticate are served` }
  const argument = rest === '' ? null : unquoteArgument(rest)
  if (argument === null) return { refusal: `${verb} takes one repository path, such as 'owner/repository.git'` }
  const parts = argument.replace(/^\//, '').split('/')
  const [ownerName, repoName] = parts
  if (parts.length !== 2 || !ownerName || !repoName || ![ownerName, repoName].every((n) => NAME.test(n) && n !== '.' && n !== '..'))
    return { refusal: `invalid repository path "${printable(argument)}": expected owner/repository(.git)` }
  return lfs ? { service, ownerName, repoName, lfs } : { service, ownerName, repoName }
}
