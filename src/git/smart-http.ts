import { statSync } from 'node:fs'
import { join } from 'node:path'
import { runGit, type GitRepo } from './run'
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
 * killed (time limit, request aborted).
 */
export async function advertiseRefs(repo: GitRepo, service: GitService, gitProtocol: string | null): Promise<Buffer<ArrayBuffer> | null> {
  const { gitDir } = repo
  const env = protocolEnv(gitProtocol)
  // Protocol v2 advertises capabilities only (refs come later through ls-refs): they depend
  // on git and on the repository's config, so they are kept until that config changes.
  const v2 = service === 'upload-pack' && /(^|:)version=2(:|$)/.test(env.GIT_PROTOCOL ?? '')
  const key = `${gitDir}\0${env.GIT_PROTOCOL}`
  let configTime = -1
  if (v2) {
    try {
      configTime = statSync(join(gitDir, 'config')).mtimeMs
    } catch {
      return null
    }
    const hit = v2Adverts.get(key)
    if (hit && hit.configTime === configTime) return hit.body
  }
  const r = await runGit([service, '--stateless-rpc', '--advertise-refs', gitDir], { ...repo, env })
  if (r.code !== 0) return null
  const prefix = Buffer.concat([pktLine(`# service=git-${service}\n`), Buffer.from('0000')])
  const body = Buffer.concat([prefix, r.stdout])
  if (v2) {
    if (v2Adverts.size >= 1000) v2Adverts.clear()
    v2Adverts.set(key, { configTime, body })
  }
  return body
}

/** Protocol v2 capability advertisements by repository (see advertiseRefs). */
const v2Adverts = new Map<string, { configTime: number; body: Buffer<ArrayBuffer> }>()

/**
 * `POST git-<service>`: the request body is piped into `git <service> --stateless-rpc` and its
 * output handed back as a stream (packs are never held in memory). Git dies when the repository's
 * signal aborts (the client hung up) or the long time limit passes.
 */
export function serviceRpc(
  repo: GitRepo,
  service: GitService,
  body: ReadableStream<Uint8Array> | null,
  gitProtocol: string | null,
  env: Record<string, string> = {},
): GitStream {
  return spawnGitStream(repo, [service, '--stateless-rpc', repo.gitDir], { input: body, env: { ...env, ...protocolEnv(gitProtocol) } })
}

/**
 * A git service over a two-way stream (SSH): `git <service> <dir>` speaking the whole protocol
 * (advertisement, then the exchange) with `input` as its stdin and its stdout handed back as a
 * stream, both streamed with backpressure. Under the long time limit; dies with `repo.signal`.
 */
export function serviceSession(
  repo: GitRepo,
  service: GitSessionService,
  input: ReadableStream<Uint8Array>,
  gitProtocol: string | null,
  env: Record<string, string> = {},
): GitStream {
  return spawnGitStream(repo, [service, repo.gitDir], { input, env: { ...env, ...protocolEnv(gitProtocol) } })
}
