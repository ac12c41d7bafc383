import type { ServerChannel } from 'ssh2'
import type { AppDeps } from '../deps'
import { findGitRepository, gitAccessRefusal, type GitRefusal, type GitRepoFound } from '../auth/git-access'
import { gitRepoOf } from '../auth/repo-context'
import { wikiForGit } from '../modules/wiki/service'
import { safeGitMessage, type GitRepo } from '../git/run'
import { serviceSession } from '../git/smart-http'
import { archiveOutputWithoutPaths, repositoryPathNames } from '../git/sideband'
import type { GitStream } from '../git/stream'
import { MAX_COMMAND_BYTES, readPushHead, refusalReport, replayed } from '../git/push-commands'
import { bodyTooLarge } from '../lib/body'
import { ApiError } from '../lib/errors'
import { gitPusher, pushHook, withPush, type PushOutcome } from '../push'
import { printable, type GitCommand } from './command'
import { accountRefusal, gitCallerOf, recordKeyUse, type SshIdentity } from './identity'
import { errorFields, loggerOf } from '../lib/log'

/**
 * One git command over an SSH channel: the same decision as git over HTTP (gitAccessRefusal),
 * then `git <service> <dir>` with the channel as its stdin and stdout, streamed both ways with
 * backpressure (the SSH window: a client that stops reading stops git, one that sends faster
 * than git reads is held back). Pushes go through the one push path as over HTTP (withPush,
 * src/push): the command list is read first and judged by the push decision (a refused ref
 * refuses the whole push), the pusher is recorded before git moves anything, and the ref
 * changes after git exits, before the channel closes.
 */

/**
 * What a command reports to its connection's idle limit (src/ssh/limits.ts IdleWatch): `touch`
 * when data moves either way; `expectingData` around the spans in which data should flow (git
 * running, the rest of a refused push being read): only there can the connection go idle, since
 * elsewhere the server is working for the client (checking access, recording a push); `serverWork`
 * marks such work inside one of those spans.
 */
export interface ChannelActivity {
  /** Seconds between git's keepalives, within the connection's idle limit (limits.ts gitKeepAliveSeconds). */
  keepAliveSeconds: number
  touch(): void
  expectingData<T>(span: Promise<T>): Promise<T>
  serverWork<T>(work: Promise<T>): Promise<T>
}

/** Refuses on the channel: the message on stderr (`Warren: …`, as Gitea prefixes its own), exit status 1. */
export function refuse(channel: ServerChannel, message: string): void {
  channel.stderr.write(`Warren: ${message}\n`)
  channel.exit(1)
  channel.end()
}

/** How SSH words each refusal of the shared decision (never revealing a repository the caller may not read). */
export function refusalMessage(refusal: GitRefusal, identity: SshIdentity, path: string): string {
  switch (refusal) {
    case 'not-found':
    case 'sign-in':
      return `repository ${path} does not exist, or you do not have access to it`
    case 'forbidden':
      return identity.kind === 'deploy-key' ? `the deploy key is read-only: it may not push to ${path}` : `you do not have permission to push to ${path}`
    case 'mirror':
      return `mirror repository ${path} is read-only`
    case 'archived':
      return `repository ${path} is archived (read-only)`
  }
}

/** Whether the channel is still open, and a promise settled when it closes (or is given up). */
export interface ChannelState {
  open: boolean
  closed: Promise<void>
  /** Stops serving the channel: closes it, and whatever still waits for the client stops waiting. */
  giveUp: () => void
}

function watchChannel(channel: ServerChannel): ChannelState {
  let settle!: () => void
  const state: ChannelState = {
    open: true,
    closed: new Promise<void>((resolve) => (settle = resolve)),
    giveUp: () => {
      if (!state.open) return
      state.open = false
      settle()
      channel.close()
    },
  }
  channel.once('close', () => {
    state.open = false
    settle()
  })
  return state
}

/**
 * Git's output copied to the channel, until git ends. A git killed by its time limit ends the
 * channel there (why on stderr, exit status 1), also for a client that stopped reading: the
 * channel is given up rather than waited for.
 */
async function relayOutput(deps: AppDeps, proc: GitStream, channel: ServerChannel, state: ChannelState, what: string, activity: ChannelActivity): Promise<Awaited<GitStream['done']>> {
  const pumped = pumpToChannel(proc.stdout, channel, state, activity)
  const result = await proc.done
  if (result.killed) {
    if (result.killed.kind !== 'aborted') loggerOf(deps.config).warn('an SSH git process stopped', { command: what, reason: result.killed.message })
    if (state.open) {
      channel.stderr.write(`Warren: ${result.killed.message}\n`)
      channel.exit(1)
    }
    state.giveUp()
  }
  await pumped
  return result
}

/**
 * What the client sends, as a stream for git's stdin: the channel is paused while the stream's
 * queue is full (so ssh2 stops opening the SSH window and the client waits). Past `limit` bytes
 * the stream errors (`overLimit` tells); once cancelled (git stopped reading), input is dropped.
 */
function channelInput(channel: ServerChannel, activity: ChannelActivity, limit = Infinity): { stream: ReadableStream<Uint8Array>; overLimit: () => boolean } {
  let finished = false
  let total = 0
  let over = false
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const finish = () => {
          if (finished) return
          finished = true
          controller.close()
        }
        channel.on('data', (chunk: Buffer) => {
          activity.touch()
          if (finished) return
          total += chunk.length
          if (total > limit) {
            over = true
            finished = true
            controller.error(bodyTooLarge(limit))
            return
          }
          controller.enqueue(chunk)
          if ((controller.desiredSize ?? 1) <= 0) channel.pause()
        })
        channel.once('end', finish)
        channel.once('close', finish)
      },
      pull() {
        channel.resume()
      },
      cancel() {
        finished = true
        channel.resume()
      },
    },
    { highWaterMark: 1024 * 1024, size: (chunk) => chunk?.byteLength ?? 0 },
  )
  return { stream, overLimit: () => over }
}

/** What pumpToChannel uses of a channel (ssh2's ServerChannel). */
export interface ChannelSink {
  /** Copies into packets at once while the client's window is open, else keeps `data` (writableLength); false past its high-water mark. */
  write(data: Uint8Array): boolean
  readonly writableLength: number
  on(event: 'drain', listener: () => void): unknown
  off(event: 'drain', listener: () => void): unknown
}

/**
 * How much of git's output goes to the channel in one write, at least: two packets of OpenSSH's
 * largest (32 KiB; ssh2 cuts a write into packets of the client's size). Git writes its pack about
 * 8 KiB at a time (upload-pack relays pack-objects' buffer), and every write to the channel costs
 * a packet (its buffers, cipher and MAC set-up) and a send on the socket whatever its size.
 */
export const CHANNEL_WRITE_BYTES = 64 * 1024
/** How long git's output may wait to fill a write when git pauses (a negotiation, a slow pack). */
export const GATHER_MS = 2
/**
 * After a read of less than a packet, git's output is read again only this much later: git's writes
 * gather in the pipe meanwhile (Bun reads a child's stdout only when asked) and one read takes them
 * all, where reading at once woke the server for each of git's writes (a 56 MiB clone: ~8,000 reads,
 * each with a second read finding nothing and two epoll changes, against ~1,000).
 */
export const READ_PAUSE_MS = 1

/**
 * Copies git's output to the channel, in writes of at least CHANNEL_WRITE_BYTES (what is gathered
 * goes when full, or GATHER_MS after its first byte came), waiting for the SSH window when the
 * client reads slowly; dropped once the channel closed. Each read of git's output, and each
 * opening of the window (the client read some), is data moving. (`gatherMs`: GATHER_MS but in a
 * test that counts writes, which a pause of the machine longer than GATHER_MS would cut early.)
 */
export async function pumpToChannel(
  stdout: ReadableStream<Uint8Array>,
  channel: ChannelSink,
  state: ChannelState,
  activity: ChannelActivity,
  gatherMs = GATHER_MS,
): Promise<void> {
  const reader = stdout.getReader()
  const read = () => reader.read().catch(() => ({ done: true as const, value: undefined }))
  const readLater = () => Bun.sleep(READ_PAUSE_MS).then(read)
  /** What is gathered for the next write; reused while the channel copies each write into its packets at once. */
  let gathered: Buffer | null = null
  let size = 0
  /** Settles GATHER_MS after the first byte of what is gathered. */
  let due: Promise<'due'> | null = null
  const send = async (data: Uint8Array) => {
    if (!state.open || channel.write(data)) return
    await new Promise<void>((resolve) => {
      const go = () => {
        activity.touch()
        channel.off('drain', go)
        resolve()
      }
      channel.on('drain', go)
      void state.closed.then(go)
    })
  }
  const sendGathered = async () => {
    const data = gathered!.subarray(0, size)
    size = 0
    due = null
    await send(data)
    // Kept by the channel (its window is shut): what comes next is gathered in a fresh buffer.
    if (channel.writableLength) gathered = null
  }
  let next = read()
  for (;;) {
    const got = due ? await Promise.race([next, due]) : await next
    if (got === 'due') {
      await sendGathered()
      continue
    }
    if (got.done) break
    let chunk = got.value
    next = chunk.byteLength < CHANNEL_WRITE_BYTES / 2 ? readLater() : read()
    activity.touch()
    if (!state.open) continue
    if (size) {
      const n = Math.min(chunk.byteLength, CHANNEL_WRITE_BYTES - size)
      gathered!.set(chunk.subarray(0, n), size)
      size += n
      chunk = chunk.subarray(n)
      if (size === CHANNEL_WRITE_BYTES) await sendGathered()
    }
    if (chunk.byteLength >= CHANNEL_WRITE_BYTES) await send(chunk)
    else if (chunk.byteLength) {
      gathered ??= Buffer.allocUnsafe(CHANNEL_WRITE_BYTES)
      gathered.set(chunk)
      size = chunk.byteLength
      due = Bun.sleep(gatherMs).then(() => 'due' as const)
    }
  }
  if (size) await sendGathered()
}

/** Runs `command` for `identity` on the channel, from the access decision to the exit status. */
export async function runGitCommand(
  deps: AppDeps,
  identity: SshIdentity,
  command: GitCommand,
  channel: ServerChannel,
  gitProtocol: string | null,
  activity: ChannelActivity,
): Promise<void> {
  const path = printable(`${command.ownerName}/${command.repoName}`)
  const disabled = accountRefusal(identity)
  if (disabled) return refuse(channel, disabled)
  // `{repo}.wiki(.git)`: the repository's wiki, under the repository's access rule while its wiki is on (findGitRepository).
  const found = await findGitRepository(deps, command.ownerName, command.repoName)
  const refusal = found ? await gitAccessRefusal(deps, gitCallerOf(identity), found, command.service) : 'not-found'
  if (refusal || !found) return refuse(channel, refusalMessage(refusal ?? 'not-found', identity, path))
  await recordKeyUse(deps, identity, found.repo.id)
  const state = watchChannel(channel)
  if (command.service === 'receive-pack' && !found.wiki) return receivePack(deps, identity, found, channel, state, gitProtocol, activity)
  // A fetch or an archive: git dies when the client goes away. A push to a wiki is git's
  // receive-pack alone (no push decision or recording: a wiki has no protection, pull requests
  // or push events), stopped too if the client goes away before it ends.
  const abort = new AbortController()
  void state.closed.then(() => abort.abort())
  let git: GitRepo | null
  try {
    git = found.wiki ? await wikiForGit(deps, gitRepoOf(deps, found, abort.signal), command.service) : gitRepoOf(deps, found, abort.signal)
  } catch (e) {
    // A wiki that cannot be made now (its repository moving away): the reason, not an internal error.
    if (e instanceof ApiError && e.status < 500) return refuse(channel, e.message)
    throw e
  }
  if (!git) return refuse(channel, refusalMessage('not-found', identity, path))
  const input = channelInput(channel, activity)
  let proc = serviceSession(git, command.service, input.stream, gitProtocol, {}, activity.keepAliveSeconds)
  // upload-archive relays git's errors to the client itself (side-band): without the server's paths.
  if (command.service === 'upload-archive')
    proc = { ...proc, stdout: archiveOutputWithoutPaths(proc.stdout, repositoryPathNames(deps.config.dataDir, git.gitDir, `${found.owner.name}/${found.repo.name}.git`)) }
  const { code, stderr } = await activity.expectingData(relayOutput(deps, proc, channel, state, `${command.service} ${path}`, activity))
  finish(channel, state, code, stderr)
}

/** Ends the channel with git's exit status: a failure's safe first line (or `refusal`) on stderr. */
function finish(channel: ServerChannel, state: ChannelState, code: number, stderr: string, refusal?: string): void {
  if (!state.open) return
  if (refusal) return refuse(channel, refusal)
  if (code !== 0 && stderr.trim()) channel.stderr.write(safeGitMessage(stderr) + '\n')
  channel.exit(code)
  channel.end()
}

/** Reads (and drops) what the client still sends, until it stops or the long git time limit passes. */
async function dropRest(reader: ReadableStreamDefaultReader<Uint8Array>, git: GitRepo): Promise<void> {
  const until = Date.now() + git.limits.long * 1000
  while (Date.now() < until && !(await reader.read().catch(() => ({ done: true }))).done);
  reader.cancel().catch(() => {})
}

/**
 * A push. receive-pack starts and advertises its refs; the client's command list is read before
 * git sees it. Then, through the one push path as over HTTP (withPush): a refused ref refuses
 * the whole push (git is stopped before it reads anything; the refusal is receive-pack's own
 * report, so the client shows each ref as rejected); otherwise the pending push is recorded and
 * git gets the list and the pack. The client going away does not stop git (a pack it sent whole
 * is applied and recorded).
 */
async function receivePack(
  deps: AppDeps,
  identity: SshIdentity,
  found: GitRepoFound,
  channel: ServerChannel,
  state: ChannelState,
  gitProtocol: string | null,
  activity: ChannelActivity,
): Promise<void> {
  const path = `${found.owner.name}/${found.repo.name}`
  const git: GitRepo = gitRepoOf(deps, found, undefined)
  const limit = deps.config.maxPushSize
  const input = channelInput(channel, activity, limit)
  const reader = input.stream.getReader()
  // What git reads: nothing until the command list has been judged, then that list and the rest (or an end).
  let admit!: (stream: ReadableStream<Uint8Array> | null) => void
  const admitted = new Promise<ReadableStream<Uint8Array> | null>((resolve) => (admit = resolve))
  let source: ReadableStreamDefaultReader<Uint8Array> | null | undefined
  const gitInput = new ReadableStream<Uint8Array>({
    async pull(controller) {
      source ??= (await admitted)?.getReader() ?? null
      const next = source ? await source.read().catch(() => ({ done: true as const, value: undefined })) : { done: true as const, value: undefined }
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    cancel() {
      reader.cancel().catch(() => {})
    },
  })
  const hook = await pushHook(deps, git)
  // The hook's channel is closed whichever way the session ends (withPush disposes it too).
  try {
    const proc = serviceSession(git, 'receive-pack', gitInput, gitProtocol, hook.git, activity.keepAliveSeconds)
    const relayed = activity.expectingData(relayOutput(deps, proc, channel, state, `receive-pack ${path}`, activity))
    const head = await readPushHead(reader).catch(() => null)

    let unread: string | null = null
    if (head === null) unread = input.overLimit() ? bodyTooLarge(limit).message : null
    else if (head === 'too-long') unread = `a push may update refs in at most ${MAX_COMMAND_BYTES} bytes of commands`
    else if (head.commands === null) unread = head.head.length ? 'the push command list could not be read (push certificates are not accepted)' : null
    if (head === null || head === 'too-long' || head.commands === null) {
      // Git gets no commands: it ends at once, having changed nothing.
      admit(null)
      await relayed
      return finish(channel, state, 0, '', unread ?? undefined)
    }
    let admittedGit = false
    let outcome: PushOutcome<void> | undefined
    try {
      outcome = await withPush(
        deps,
        found,
        gitPusher(gitCallerOf(identity)),
        head.commands,
        async () => {
          admittedGit = true
          admit(replayed(head.head, reader))
          await relayed
        },
        activity.serverWork,
        hook,
      )
    } catch (e) {
      if (!admittedGit) {
        // Failed before git got anything (deciding, writing the pending push): it ends at once, having changed nothing.
        admit(null)
        await relayed
        throw e
      }
      // Recording failed after git ran: the pending push stays for the repairs.
      loggerOf(deps.config).error('updating a repository after a push failed', { repoId: found.repo.id, ...errorFields(e) })
    }
    if (outcome?.refused) {
      const { message, reasons } = outcome.refused
      admit(null)
      await relayed
      const report = refusalReport(head.commands, head.capabilities, reasons, message)
      if (report.length && state.open) {
        channel.write(report)
        await activity.expectingData(dropRest(reader, git))
      }
      return finish(channel, state, 0, '', message)
    }
    const { code, stderr } = await relayed
    finish(channel, state, code, stderr, input.overLimit() ? bodyTooLarge(limit).message : undefined)
  } finally {
    await hook.dispose()
  }
}
