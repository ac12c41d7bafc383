import { isSafeRefName } from './ref-name'
import { pktLine } from './smart-http'
import { isObjectId } from './run'

/**
 * The command list at the start of a `git receive-pack` request (pkt-lines `old new ref`, the
 * first with `\0capabilities`, then a flush; shallow lines may come first), read before the
 * request reaches git so that the one push decision (src/push/decision.ts) judges each ref
 * before git moves it and the pusher of each ref is known. Only this small head is held; the pack after it is streamed on untouched.
 */
export interface PushCommand {
  ref: string
  old: string
  new: string
  /**
   * The server wrote `new` on top of `old` (a pull request's merge, src/push's moveRefs): the
   * move rewrites no history. Never read from a client's request (the list read here has none).
   */
  fastForward?: boolean
}

export interface PushHead {
  /** The bytes read so far (the command list and whatever followed in the same chunks): git gets them first. */
  head: Uint8Array
  /** Null when the list could not be read (a push certificate, or a malformed start): refused. */
  commands: PushCommand[] | null
  capabilities: string[]
}

/** The command list may take at most this many bytes (about 5000 refs); a longer one is refused. */
export const MAX_COMMAND_BYTES = 512 * 1024

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

/** What parseCommandLines found so far: the commands, and the capabilities of the first. */
interface CommandList {
  commands: PushCommand[]
  capabilities: string[]
}

const PKT_LENGTH = /^[0-9a-f]{4}$/

/**
 * A command line's text: UTF-8 or nothing. A name of other bytes would reach git as they are while
 * a lenient decoding (U+FFFD for each bad byte) showed the push decision another name, and made
 * two refs one in the records (`x\xfe` and `x\xff`). A byte order mark is kept (`ignoreBOM`), so
 * the line reads as git reads it: not a command.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * Parses the complete pkt-lines at the start of `buf` into `list`: `end` is 'flush' at the end of
 * the list, 'bad' for anything but a command (or a shallow line), null when `buf` ends first; then
 * `used` bytes were parsed and the next line needs `need` bytes (its length, or 4 for its header).
 */
function parseCommandLines(buf: Buffer, list: CommandList): { end: 'flush' | 'bad' | null; used: number; need: number } {
  let at = 0
  for (;;) {
    if (at + 4 > buf.length) return { end: null, used: at, need: 4 }
    const header = buf.toString('latin1', at, at + 4)
    const len = PKT_LENGTH.test(header) ? parseInt(header, 16) : -1
    if (len < 0 || (len > 0 && len < 4)) return { end: 'bad', used: at, need: 0 }
    if (len === 0) return { end: 'flush', used: at + 4, need: 0 }
    if (at + len > buf.length) return { end: null, used: at, need: len }
    let line: string
    try {
      line = UTF8.decode(buf.subarray(at + 4, at + len)).replace(/\n$/, '')
    } catch {
      return { end: 'bad', used: at, need: 0 }
    }
    at += len
    if (line.startsWith('shallow ')) continue
    const nul = line.indexOf('\0')
    if (nul >= 0) {
      if (list.commands.length === 0) list.capabilities = line.slice(nul + 1).split(' ').filter(Boolean)
      line = line.slice(0, nul)
    }
    const [old, neu, ref, extra] = line.split(' ')
    if (!old || !neu || !ref || extra !== undefined || !isObjectId(old) || !isObjectId(neu)) return { end: 'bad', used: at, need: 0 }
    list.commands.push({ ref, old, new: neu })
  }
}

/**
 * Reads the command list from the start of `reader`, in time linear in its size whatever the
 * chunking (bytes are joined only once the next whole pkt-line has arrived). Answers 'too-long'
 * when it exceeds MAX_COMMAND_BYTES, however it arrives (nothing has reached git then); a line not
 * in UTF-8 makes the list unreadable; `commands` is null when the
 * list cannot be read (a push certificate, which Warren never offers, or a malformed start).
 */
export async function readPushHead(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<PushHead | 'too-long'> {
  const received: Uint8Array[] = []
  let receivedBytes = 0
  let unparsed: Uint8Array[] = []
  let unparsedBytes = 0
  let need = 4
  /** Bytes of the list parsed so far: bounded however the client chunks it. */
  let parsedBytes = 0
  const list: CommandList = { commands: [], capabilities: [] }
  const result = (commands: PushCommand[] | null): PushHead => ({ head: Buffer.concat(received, receivedBytes), commands, capabilities: list.capabilities })
  for (;;) {
    if (unparsedBytes >= need) {
      const buf = Buffer.concat(unparsed, unparsedBytes)
      const parsed = parseCommandLines(buf, list)
      parsedBytes += parsed.used
      if (parsedBytes > MAX_COMMAND_BYTES) return 'too-long'
      if (parsed.end === 'flush') return result(list.commands)
      if (parsed.end === 'bad') return result(null)
      unparsed = [buf.subarray(parsed.used)]
      unparsedBytes = buf.length - parsed.used
      need = parsed.need
    }
    if (receivedBytes > MAX_COMMAND_BYTES) return 'too-long'
    const next = await reader.read()
    if (next.done) return result(null)
    received.push(next.value)
    receivedBytes += next.value.length
    unparsed.push(next.value)
    unparsedBytes += next.value.length
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

/**
 * receive-pack's answer refusing every command of a push (report-status: `unpack ok`, then
 * `ng <ref> <reason>`, `reasons` in the order of `commands`), in side-band when the client asked
 * for it, with `message` on the progress band so that it shows as `remote: …`. Empty when the
 * client asked for no report.
 */
export function refusalReport(commands: PushCommand[], capabilities: string[], reasons: readonly string[], message: string): Buffer {
  if (!capabilities.includes('report-status') && !capabilities.includes('report-status-v2')) return Buffer.alloc(0)
  const report = Buffer.concat([pktLine('unpack ok\n'), ...commands.map((c, i) => pktLine(`ng ${c.ref} ${reasons[i]}\n`)), Buffer.from('0000')])
  const band = capabilities.includes('side-band-64k') ? 65515 : capabilities.includes('side-band') ? 995 : 0
  if (!band) return report
  const parts: Buffer[] = [pktLine(Buffer.concat([Buffer.from([2]), Buffer.from(message.endsWith('\n') ? message : message + '\n')]))]
  for (let at = 0; at < report.length; at += band) parts.push(pktLine(Buffer.concat([Buffer.from([1]), report.subarray(at, at + band)])))
  parts.push(Buffer.from('0000'))
  return Buffer.concat(parts)
}
