import { refAnswer } from './ref-answers'
import { runGit, type GitOptions, type GitRepo } from './run'
import { spawnGitStream, type GitStream } from './stream'

/** Git smart HTTP (stateless RPC): ref advertisement and the upload/receive pack exchanges. */
export type GitService = 'upload-pack' | 'receive-pack'

export const isGitService = (s: string): s is GitService => s === 'upload-pack' || s === 'receive-pack'

/** The services a two-way transport (SSH) runs: the two above, and archives (`git archive --remote`). */
export type GitSessionService = GitService | 'upload-archive'

/** `Git-Protocol` header values look like `version=2` (colon-separated key=value pairs). */
const GIT_PROTOCOL = /^[A-Za-z0-9._=:-]{1,200}$/

function protocolEnv(gitProtocol: string | null): Record<string, string> {
  return gitProtocol && GIT_PROTOCOL.test(gitProtocol) ? { GIT_PROTOCOL: gitProtocol } : {}
}

/** One pkt-line of text. */
/** One pkt-line: its 4-hex-digit length (header included), then the payload. */
export function pktLine(payload: Uint8Array | string): Buffer {
  const body = Buffer.from(payload)
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body])
}

/**
 * The body of `GET info/refs?service=git-<service>`: `# service=...` pkt-line, flush, then
 * `git <service> --stateless-rpc --advertise-refs`. Null when git fails; GitError when it was
 * killed (time limit, request aborted). upload-pack's advertisement (the refs in protocol v0/v1,
 * the capabilities in v2) is git's answer kept while the refs and config are unchanged
 * (ref-answers.ts); receive-pack's is made each time (it also names the objects of alternates,
 * and a push runs git anyway).
 */
export async function advertiseRefs(repo: GitRepo, service: GitService, gitProtocol: string | null): Promise<Buffer<ArrayBuffer> | null> {
  const { gitDir } = repo
  const env = protocolEnv(gitProtocol)
  const make = async () => {
    const r = await runGit([service, '--stateless-rpc', '--advertise-refs', gitDir], { ...repo, env })
    const value = r.code === 0 ? Buffer.concat([pktLine(`# service=git-${service}\n`), Buffer.from('0000'), r.stdout]) : null
    return { value, ok: value !== null, weight: value?.length ?? 0 }
  }
  return service === 'upload-pack' ? refAnswer(gitDir, `advertise\0${env.GIT_PROTOCOL ?? ''}`, make) : (await make()).value
}

/** Protocol v2 requests read whole to be recognised as `ls-refs` at most this long (git's are far shorter). */
export const MAX_LS_REFS_REQUEST = 8 * 1024

const LS_REFS_COMMAND = /^command=ls-refs\n?$/

/**
 * Whether `body` is one protocol v2 `ls-refs` request: well-formed pkt-lines, the first
 * `command=ls-refs`, the last a flush packet ending the body.
 */
export function isLsRefsRequest(body: Uint8Array): boolean {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1')
  let at = 0
  let first = true
  while (at + 4 <= text.length) {
    const head = text.slice(at, at + 4)
    if (!/^[0-9a-f]{4}$/.test(head)) return false
    const length = parseInt(head, 16)
    if (length === 0) return !first && at + 4 === text.length
    if (length === 1 || length === 2) {
      // A delimiter or response-end packet: never the first.
      if (first) return false
      at += 4
      continue
    }
    if (length < 4 || at + length > text.length) return false
    if (first && !LS_REFS_COMMAND.test(text.slice(at + 4, at + length))) return false
    first = false
    at += length
  }
  return false
}

/**
 * The answer to a protocol v2 `ls-refs` request (isLsRefsRequest): `git upload-pack
 * --stateless-rpc` given `body`, kept while the refs and config are unchanged (ref-answers.ts),
 * as its output depends on nothing else. Throws GitError when git was killed.
 */
export async function lsRefs(repo: GitRepo, body: Uint8Array, gitProtocol: string | null): Promise<Buffer<ArrayBuffer>> {
  const env = protocolEnv(gitProtocol)
  const request = `ls-refs\0${env.GIT_PROTOCOL ?? ''}\0${Buffer.from(body).toString('latin1')}`
  return refAnswer(repo.gitDir, request, async () => {
    const r = await runGit(['upload-pack', '--stateless-rpc', repo.gitDir], { ...repo, env, input: body })
    return { value: r.stdout as Buffer<ArrayBuffer>, ok: r.code === 0, weight: r.stdout.length }
  })
}

/** What a service's hooks run with: environment, and a channel to them (GitOptions.channel). */
export type HookOptions = Pick<GitOptions, 'env' | 'channel'>

/**
 * `POST git-<service>`: the request body is piped into `git <service> --stateless-rpc` and its
 * output handed back as a stream (packs are never held in memory). Git dies when the repository's
 * signal aborts (the client hung up) or the long time limit passes. `hooks`: what git's hooks
 * run with (a receive-pack's pre-receive hook, src/push/hook.ts): environment and a channel.
 */
export function serviceRpc(
  repo: GitRepo,
  service: GitService,
  body: ReadableStream<Uint8Array> | null,
  gitProtocol: string | null,
  hooks: HookOptions = {},
): GitStream {
  return spawnGitStream(repo, [service, '--stateless-rpc', repo.gitDir], { input: body, channel: hooks.channel, env: { ...hooks.env, ...protocolEnv(gitProtocol) } })
}

/**
 * A git service over a two-way stream (SSH): `git <service> <dir>` speaking the whole protocol
 * (advertisement, then the exchange) with `input` as its stdin and its stdout handed back as a
 * stream, both streamed with backpressure. Under the long time limit; dies with `repo.signal`.
 * `hooks` as for serviceRpc; `keepAliveSeconds`: how often git sends its keepalive while it
 * prepares a pack the client waits for quietly (uploadpack.keepAlive) or checks one it received
 * (receive.keepAlive), git's own 5 s when not given.
 */
export function serviceSession(
  repo: GitRepo,
  service: GitSessionService,
  input: ReadableStream<Uint8Array>,
  gitProtocol: string | null,
  hooks: HookOptions = {},
  keepAliveSeconds?: number,
): GitStream {
  const keepAlive = keepAliveSeconds ? ['-c', `uploadpack.keepAlive=${keepAliveSeconds}`, '-c', `receive.keepAlive=${keepAliveSeconds}`] : []
  return spawnGitStream(repo, [...keepAlive, service, repo.gitDir], { input, channel: hooks.channel, env: { ...hooks.env, ...protocolEnv(gitProtocol) } })
}
