import { statSync } from 'node:fs'
import { join } from 'node:path'
import { runGit, type GitRepo } from './run'
import { spawnGitStream, type GitStream } from './stream'

/** Git smart HTTP (stateless RPC): ref advertisement and the upload/receive pack exchanges. */
export type GitService = 'upload-pack' | 'receive-pack'

export const isGitService = (s: string): s is GitService => s === 'upload-pack' || s === 'receive-pack'

/** `Git-Protocol` header values look like `version=2` (colon-separated key=value pairs). */
const GIT_PROTOCOL = /^[A-Za-z0-9._=:-]{1,200}$/

function protocolEnv(gitProtocol: string | null): Record<string, string> {
  return gitProtocol && GIT_PROTOCOL.test(gitProtocol) ? { GIT_PROTOCOL: gitProtocol } : {}
}

/** One pkt-line of text. */
function pktLine(text: string): string {
  return (text.length + 4).toString(16).padStart(4, '0') + text
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
  const prefix = Buffer.from(pktLine(`# service=git-${service}\n`) + '0000')
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
): GitStream {
  return spawnGitStream(repo, [service, '--stateless-rpc', repo.gitDir], { input: body, env: protocolEnv(gitProtocol) })
}

/** pkt-line payloads at the start of `data` (up to a flush or the first malformed/partial line). */
function pktPayloads(data: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = []
  let at = 0
  while (at + 4 <= data.length) {
    const len = parseInt(Buffer.from(data.subarray(at, at + 4)).toString('latin1'), 16)
    if (!Number.isFinite(len) || len < 4 || at + len > data.length) break
    out.push(data.subarray(at + 4, at + len))
    at += len
  }
  return out
}

/** At most this much of receive-pack's answer is kept for reading its report (it is a few KiB). */
const REPORT_LIMIT = 1 << 20

/**
 * Watches what `git receive-pack` answers (the request body itself goes to git untouched) and
 * reads its report-status: the refs it updated (`ok <ref>`), in the order the client sent
 * them. Works with and without side-band; empty when the client asked for no report.
 */
export function pushReportWatcher(): { observe: (chunk: Uint8Array) => void; updatedRefs: () => string[] } {
  const chunks: Uint8Array[] = []
  let size = 0
  return {
    observe(chunk) {
      if (size >= REPORT_LIMIT) return
      chunks.push(chunk)
      size += chunk.length
    },
    updatedRefs() {
      let pkts = pktPayloads(Buffer.concat(chunks))
      // side-band-64k: the report is itself pkt-lines, inside the band-1 packets.
      if (pkts.length && pkts[0]!.length && pkts[0]![0]! <= 3)
        pkts = pktPayloads(Buffer.concat(pkts.filter((p) => p[0] === 1).map((p) => p.subarray(1))))
      const refs: string[] = []
      for (const p of pkts) {
        const line = Buffer.from(p).toString('utf8').replace(/\n$/, '')
        if (line.startsWith('ok ')) refs.push(line.slice(3))
      }
      return refs
    },
  }
}

/** Branches among the refs a push updated (created, updated or deleted), in order. */
export const pushedBranches = (refs: string[]): string[] =>
  refs.filter((r) => r.startsWith('refs/heads/')).map((r) => r.slice('refs/heads/'.length))
