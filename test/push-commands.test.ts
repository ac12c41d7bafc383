import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_COMMAND_BYTES, readPushHead } from '../src/git/push-commands'
import { pktLine } from '../src/git/smart-http'
import { repoPath } from '../src/git/run'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, tempDir } from './git-fixture'

/**
 * The command list a push starts with (git/push-commands.ts), read before git: a ref name that is
 * not UTF-8 makes the list unreadable (the push refused whole, where the name git would store and
 * the name the decision judged differed, and two such refs were one in the records), and the
 * list's bound holds however the bytes arrive (one large chunk got past it).
 */

const ZERO = '0'.repeat(40)
const ONE = '1'.repeat(40)
const streamOf = (...chunks: Uint8Array[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk)
      c.close()
    },
  }).getReader()
const line = (text: string | Buffer) => pktLine(text)

describe('the command list of a push', () => {
  test('a ref name of bytes that are not UTF-8 makes the list unreadable; UTF-8 names are read', async () => {
    const bad = Buffer.concat([Buffer.from(`${ZERO} ${ONE} refs/heads/x`), Buffer.from([0xfe]), Buffer.from('\0report-status\n')])
    const read = await readPushHead(streamOf(Buffer.concat([pktLine(bad), Buffer.from('0000')])))
    expect(read === 'too-long' ? read : read.commands).toBeNull()
    // A byte order mark before the old id: not a command (git would not read one either).
    const marked = await readPushHead(streamOf(Buffer.concat([line(`\ufeff${ZERO} ${ONE} refs/heads/x\0report-status\n`), Buffer.from('0000')])))
    expect(marked === 'too-long' ? marked : marked.commands).toBeNull()
    const good = await readPushHead(streamOf(Buffer.concat([line(`${ZERO} ${ONE} refs/heads/café\0report-status\n`), Buffer.from('0000')])))
    expect(good === 'too-long' ? good : good.commands).toEqual([{ ref: 'refs/heads/café', old: ZERO, new: ONE }])
  })

  test('a list past MAX_COMMAND_BYTES is too long, in one chunk as in many', async () => {
    const lines: Buffer[] = []
    for (let i = 0, size = 0; size <= MAX_COMMAND_BYTES; i++) {
      const l = line(`${ZERO} ${ONE} refs/heads/long/${String(i).padStart(6, '0')}${'x'.repeat(60)}\n`)
      lines.push(l)
      size += l.length
    }
    const whole = Buffer.concat([...lines, Buffer.from('0000')])
    expect(await readPushHead(streamOf(whole))).toBe('too-long')
    expect(await readPushHead(streamOf(...lines, Buffer.from('0000')))).toBe('too-long')
  })
})

describe('over HTTP', () => {
  let s: TestServer
  let alice: TestUser
  beforeAll(async () => {
    s = await startTestServer()
    alice = await s.user('alice')
    expect((await s.post('/user/repos', { name: 'pub', auto_init: true }, { token: alice.token })).status).toBe(201)
  })
  afterAll(() => s.stop())

  test('a push naming refs in bytes that are not UTF-8 is refused and creates nothing', async () => {
    const head = (await s.get('/repos/alice/pub/branches/main', { token: alice.token })).body.commit.id as string
    const dir = tempDir()
    const pack = Bun.spawnSync(['git', 'pack-objects', '--stdout'], { cwd: dir, stdin: new Uint8Array(0) }).stdout
    const command = Buffer.concat([Buffer.from(`${ZERO} ${head} refs/heads/x`), Buffer.from([0xfe]), Buffer.from('\0report-status side-band-64k\n')])
    const body = Buffer.concat([pktLine(command), Buffer.from('0000'), pack])
    const res = await fetch(`${s.url}/alice/pub.git/git-receive-pack`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-git-receive-pack-request', authorization: alice.basic },
      body,
    })
    await res.arrayBuffer()
    expect((await s.get('/repos/alice/pub/branches', { token: alice.token })).body.map((b: { name: string }) => b.name)).toEqual(['main'])
    const refs = await gitOk(s.dataDir, '--git-dir', repoPath(s.dataDir, 'alice', 'pub'), 'for-each-ref', '--format=%(refname)')
    expect(refs.trim().split('\n')).toEqual(['refs/heads/main'])
    Bun.spawnSync(['rm', '-rf', dir])
  })
})
