import { isSafeRefName } from './refs'

/**
 * The command list at the start of a `git receive-pack` request (pkt-lines `old new ref`, the
 * first with `\0capabilities`, then a flush; shallow lines may come first), read before the
 * request reaches git so that refs the API could not serve are refused and the pusher of each
 * ref is known. Only this small head is held; the pack after it is streamed on untouched.
 */
export interface PushCommand {
  ref: string
  old: string
  new: string
}

export interface PushHead {
  /** The bytes read so far (the command list and whatever followed in the same chunks): git gets them first. */
  head: Uint8Array
  /** Null when the list could not be read (a signed push, or a malformed start): git judges it. */
  commands: PushCommand[] | null
  capabilities: string[]
}

/** The command list may take at most this many bytes (about 5000 refs); a longer one is refused. */
export const MAX_COMMAND_BYTES = 512 * 1024

const OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/
const ZERO_OID = /^0+$/
export const isZeroOid = (oid: string) => ZERO_OID.test(oid)

/**
 * Why git may store `ref` but the API could not serve it, or null when it is fine. The API's
 * rule (isSafeRefName) on the name under refs/heads/ or refs/tags/ (or under refs/ for other
 * refs), and, as Gitea's pre-receive hook, no component may start with `-`.
 */
export function pushRefProblem(ref: string): string | null {
  if (!ref.startsWith('refs/')) return 'not a full ref name'
  const short = ref.startsWith('refs/heads/') || ref.startsWith('refs/tags/') ? ref.slice(ref.indexOf('/', 5) + 1) : ref.slice(5)
  if (short.split('/').some((c) => c.startsWith('-'))) return 'ref name component starts with "-"'
  if (!isSafeRefName(short)) return 'invalid ref name'
  return null
}

/** Parses the pkt-lines of `buf` up to the flush; 'more' when the flush has not arrived yet. */
function parseCommandList(buf: Uint8Array): { commands: PushCommand[] | null; capabilities: string[] } | 'more' {
  const commands: PushCommand[] = []
  let capabilities: string[] = []
  let at = 0
  for (;;) {
    if (at + 4 > buf.length) return 'more'
    const len = parseInt(Buffer.from(buf.subarray(at, at + 4)).toString('latin1'), 16)
    if (!Number.isInteger(len) || (len > 0 && len < 4)) return { commands: null, capabilities }
    if (len === 0) return { commands, capabilities }
    if (at + len > buf.length) return 'more'
    let line = Buffer.from(buf.subarray(at + 4, at + len)).toString('utf8').replace(/\n$/, '')
    at += len
    if (line.startsWith('shallow ')) continue
    const nul = line.indexOf('\0')
    if (nul >= 0) {
      if (commands.length === 0) capabilities = line.slice(nul + 1).split(' ').filter(Boolean)
      line = line.slice(0, nul)
    }
    const [old, neu, ref, extra] = line.split(' ')
    if (!old || !neu || !ref || extra !== undefined || !OID.test(old) || !OID.test(neu)) return { commands: null, capabilities }
    commands.push({ ref, old, new: neu })
  }
}

/**
 * Reads the command list from the start of `reader`. Answers 'too-long' when it exceeds
 * MAX_COMMAND_BYTES (nothing has reached git then).
 */
export async function readPushHead(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<PushHead | 'too-long'> {
  let head = new Uint8Array(0)
  for (;;) {
    const parsed = head.length ? parseCommandList(head) : 'more'
    if (parsed !== 'more') return { head, ...parsed }
    if (head.length > MAX_COMMAND_BYTES) return 'too-long'
    const next = await reader.read()
    if (next.done) return { head, commands: null, capabilities: [] }
    head = Buffer.concat([head, next.value])
  }
}

/** A stream of `head` and then the rest of `reader` (what git reads as its standard input). */
export function replayed(head: Uint8Array, reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  let sentHead = head.length === 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sentHead) {
        sentHead = true
        return controller.enqueue(head)
      }
      try {
        const next = await reader.read()
        if (next.done) controller.close()
        else controller.enqueue(next.value)
      } catch {
        // The client went away: git sees the end of its input (and keeps a complete pack).
        controller.close()
      }
    },
    cancel() {
      reader.cancel().catch(() => {})
    },
  })
}

function pkt(payload: Uint8Array | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : Buffer.from(payload)
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body])
}

/**
 * receive-pack's answer refusing every command of a push (report-status: `unpack ok`, then
 * `ng <ref> <reason>`), in side-band when the client asked for it, with `message` on the
 * progress band so that it shows as `remote: …`. Empty when the client asked for no report.
 */
export function refusalReport(commands: PushCommand[], capabilities: string[], reason: (c: PushCommand) => string, message: string): Buffer {
  if (!capabilities.includes('report-status') && !capabilities.includes('report-status-v2')) return Buffer.alloc(0)
  const report = Buffer.concat([pkt('unpack ok\n'), ...commands.map((c) => pkt(`ng ${c.ref} ${reason(c)}\n`)), Buffer.from('0000')])
  const band = capabilities.includes('side-band-64k') ? 65515 : capabilities.includes('side-band') ? 995 : 0
  if (!band) return report
  const parts: Buffer[] = [pkt(Buffer.concat([Buffer.from([2]), Buffer.from(message.endsWith('\n') ? message : message + '\n')]))]
  for (let at = 0; at < report.length; at += band) parts.push(pkt(Buffer.concat([Buffer.from([1]), report.subarray(at, at + band)])))
  parts.push(Buffer.from('0000'))
  return Buffer.concat(parts)
}
