import { realpathSync } from 'node:fs'

/**
 * Messages git sends its client inside the protocol, with the server's paths taken out. git's
 * own errors name the repository by its place on disk (`'../x' is outside repository at
 * '/srv/warren/repositories/alice/proj.git/.'`): the client must learn neither the data folder nor
 * its layout. `git upload-archive` answers one pkt-line (`ACK`, or `NACK <reason>`), then its
 * output in side-band packets: band 1 carries the archive's bytes and is passed on untouched
 * (a file in the archive may well contain such a path), bands 2 and 3 carry git's messages and
 * are rewritten. Streamed: at most one pkt-line (65520 bytes) is held at a time.
 */

/** Longest pkt-line, its 4-byte length included. */
const MAX_PKT = 65520

export interface PathNames {
  /**
   * Absolute paths and what to show instead, the longest first (a repository's folder before the
   * data folder holding it), as latin1 text of their UTF-8 bytes (how messages are read here).
   */
  replace: [string, string][]
}

const asBytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1')

/**
 * What a repository's messages show instead of its paths: its folder (as given, and as the
 * system resolves it) becomes `shown` (`owner/name.git`), the data folder `<data>`.
 */
export function repositoryPathNames(dataDir: string, gitDir: string, shown: string): PathNames {
  const real = (path: string) => {
    try {
      return realpathSync(path)
    } catch {
      return path
    }
  }
  const pairs: [string, string][] = [
    [gitDir, shown],
    [real(gitDir), shown],
    [dataDir, '<data>'],
    [real(dataDir), '<data>'],
  ]
  return { replace: pairs.map(([path, to]): [string, string] => [asBytes(path), to]).sort((a, b) => b[0].length - a[0].length) }
}

/** `text` with every path of `names` replaced. */
export function withoutPaths(text: string, names: PathNames): string {
  let out = text
  for (const [path, shown] of names.replace) if (path) out = out.split(path).join(shown)
  return out
}

/** The pkt-line of `payload` (cut to the longest a pkt-line holds). */
function frame(payload: Buffer): Buffer {
  const body = payload.subarray(0, MAX_PKT - 4)
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body])
}

/**
 * `git upload-archive`'s output with the paths of `names` taken out of everything but the
 * archive's own bytes (side-band 1). Output that is not pkt-lines is passed on as it comes.
 */
export function archiveOutputWithoutPaths(output: ReadableStream<Uint8Array>, names: PathNames): ReadableStream<Uint8Array> {
  let held: Buffer = Buffer.alloc(0)
  let framed = true
  return output.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!framed) return controller.enqueue(chunk)
        held = held.length ? Buffer.concat([held, chunk]) : Buffer.from(chunk)
        let at = 0
        while (held.length - at >= 4) {
          const header = held.toString('latin1', at, at + 4)
          const length = /^[0-9a-f]{4}$/.test(header) ? parseInt(header, 16) : -1
          if (length < 0 || length === 3 || length > MAX_PKT) {
            // Not git's framing: nothing here is one of its messages.
            framed = false
            controller.enqueue(held.subarray(at))
            held = Buffer.alloc(0)
            return
          }
          if (length < 4) {
            controller.enqueue(held.subarray(at, at + 4))
            at += 4
            continue
          }
          if (held.length - at < length) break
          const payload = held.subarray(at + 4, at + length)
          if (payload[0] === 1) controller.enqueue(held.subarray(at, at + length))
          else {
            const text = payload.toString('latin1')
            const clean = withoutPaths(text, names)
            controller.enqueue(clean === text ? held.subarray(at, at + length) : frame(Buffer.from(clean, 'latin1')))
          }
          at += length
        }
        held = held.subarray(at)
      },
      flush(controller) {
        if (held.length) controller.enqueue(held)
      },
    }),
  )
}
