import { statSync } from 'node:fs'
import { join } from 'node:path'
import { runGit } from './run'
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
export function pktLine(text: string): string {
  return (text.length + 4).toString(16).padStart(4, '0') + text
}

/**
 * The body of `GET info/refs?service=git-<service>`: `# service=...` pkt-line, flush, then
 * `git <service> --stateless-rpc --advertise-refs`. Null when git fails.
 */
export async function advertiseRefs(gitDir: string, service: GitService, gitProtocol: string | null): Promise<Buffer<ArrayBuffer> | null> {
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
  const r = await runGit([service, '--stateless-rpc', '--advertise-refs', gitDir], { gitDir, env })
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
 * output handed back as a stream (packs are never held in memory).
 */
export function serviceRpc(
  gitDir: string,
  service: GitService,
  body: ReadableStream<Uint8Array> | null,
  gitProtocol: string | null,
): GitStream {
  return spawnGitStream([service, '--stateless-rpc', gitDir], { gitDir, stdin: body, env: protocolEnv(gitProtocol) })
}

export interface RefUpdate {
  oldId: string
  newId: string
  ref: string
}

const ZERO = /^0+$/

/**
 * Passes a receive-pack request body through unchanged while reading the ref update commands
 * at its start (pkt-lines up to the first flush); `commands` resolves once they are read.
 */
export function watchPushCommands(body: ReadableStream<Uint8Array>): {
  body: ReadableStream<Uint8Array>
  commands: Promise<RefUpdate[]>
} {
  let resolve!: (c: RefUpdate[]) => void
  const commands = new Promise<RefUpdate[]>((r) => (resolve = r))
  let buf = Buffer.alloc(0)
  let finished = false
  const finish = (list: RefUpdate[]) => {
    if (!finished) {
      finished = true
      buf = Buffer.alloc(0)
      resolve(list)
    }
  }
  const parse = (): void => {
    const list: RefUpdate[] = []
    let at = 0
    while (at + 4 <= buf.length) {
      const len = parseInt(buf.subarray(at, at + 4).toString('latin1'), 16)
      if (!Number.isFinite(len)) return finish(list)
      if (len === 0) return finish(list)
      if (len < 4) return finish(list)
      if (at + len > buf.length) return // wait for more
      let line = buf.subarray(at + 4, at + len).toString('utf8')
      const nul = line.indexOf('\0')
      if (nul >= 0) line = line.slice(0, nul)
      const [oldId, newId, ref] = line.replace(/\n$/, '').split(' ')
      if (oldId && newId && ref && /^[0-9a-f]+$/.test(oldId)) list.push({ oldId, newId, ref })
      at += len
    }
  }
  const watcher = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (!finished) {
        buf = Buffer.concat([buf, chunk])
        parse()
        if (!finished && buf.length > 1 << 20) finish([])
      }
      controller.enqueue(chunk)
    },
    flush() {
      finish([])
    },
  })
  return { body: body.pipeThrough(watcher), commands }
}

/** Branches a push created or updated, in the order the client sent them. */
export const pushedBranches = (cmds: RefUpdate[]): string[] =>
  cmds.filter((c) => c.ref.startsWith('refs/heads/') && !ZERO.test(c.newId)).map((c) => c.ref.slice('refs/heads/'.length))
