import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { giteaApi } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, signInByForm } from './web-session'
import { repairAvatars } from '../src/modules/avatars/storage'
import { doctor } from '../src/ops/doctor'
import { AVATAR_MAX_BYTES } from '../src/modules/avatars/image'

let s: TestServer
let alice: TestUser, bob: TestUser, writer: TestUser, admin: TestUser, stranger: TestUser

const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]
const le16 = (n: number) => [n & 255, (n >>> 8) & 255]
const le24 = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255]
const text = (t: string) => [...t].map((c) => c.charCodeAt(0))

/** A real 1x1 PNG; `png(w, h)`: its header with another size (the pixels are never read). */
const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64')
const png = (w: number, h: number, extra = 0) =>
  new Uint8Array([...PNG_1X1.subarray(0, 16), ...be32(w), ...be32(h), ...PNG_1X1.subarray(24), ...new Array(extra).fill(0)])
/** A real 1x1 GIF; `gif(w, h)` with another logical screen size. */
const GIF_1X1 = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')
const gif = (w: number, h: number) => new Uint8Array([...GIF_1X1.subarray(0, 6), ...le16(w), ...le16(h), ...GIF_1X1.subarray(10)])
/** A JPEG's header: SOI, an APP0 (JFIF) segment, then a baseline frame header of w x h. */
const jpeg = (w: number, h: number) =>
  new Uint8Array([
    0xff, 0xd8,
    0xff, 0xe0, 0, 16, ...text('JFIF'), 0, 1, 1, 0, 0, 1, 0, 1, 0, 0,
    0xff, 0xc0, 0, 17, 8, (h >> 8) & 255, h & 255, (w >> 8) & 255, w & 255, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1,
    0xff, 0xd9,
  ])
/** WebP files of the three kinds of first chunk. */
const riff = (chunk: number[]) => new Uint8Array([...text('RIFF'), ...le24(chunk.length + 4), 0, ...text('WEBP'), ...chunk])
const webpLossless = (w: number, h: number) => {
  const bits = ((w - 1) | ((h - 1) << 14)) >>> 0
  return riff([...text('VP8L'), 5, 0, 0, 0, 0x2f, bits & 255, (bits >>> 8) & 255, (bits >>> 16) & 255, (bits >>> 24) & 255, 0])
}
const webpLossy = (w: number, h: number) => riff([...text('VP8 '), 10, 0, 0, 0, 0, 0, 0, 0x9d, 0x01, 0x2a, ...le16(w), ...le16(h)])
const webpExtended = (w: number, h: number) => riff([...text('VP8X'), 10, 0, 0, 0, 0, 0, 0, 0, ...le24(w - 1), ...le24(h - 1)])

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
const HASH_URL = (kind: string) => new RegExp(`^${s.url.replace(/[.]/g, '\\.')}/${kind}/[0-9a-f]{64}$`)
const filesIn = (folder: string) => (existsSync(join(s.dataDir, folder)) ? readdirSync(join(s.dataDir, folder)) : [])

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  writer = await s.user('writer')
  admin = await s.user('repoadmin')
  stranger = await s.user('stranger')
  for (const [name, priv] of [['pub', false], ['secret', true]] as const) {
    expect((await s.post('/user/repos', { name, private: priv }, { token: alice.token })).status).toBe(201)
    for (const [who, permission] of [[writer, 'write'], [admin, 'admin']] as const)
      expect((await s.put(`/repos/alice/${name}/collaborators/${who.name}`, { permission }, { token: alice.token })).status).toBe(204)
  }
  expect((await s.post('/orgs', { username: 'acme' }, { token: alice.token })).status).toBe(201)
  const team = await s.post('/orgs/acme/teams', { name: 'devs', permission: 'write', units: ['repo.code'] }, { token: alice.token })
  expect(team.status).toBe(201)
  expect((await s.put(`/teams/${team.body.id}/members/bob`, undefined, { token: alice.token })).status).toBe(204)
})
afterAll(() => s.stop())

describe('user avatars', () => {
  test('upload through gitea-js; /user, /users/{u} and lists point at it; served with its type, nosniff and a long cache', async () => {
    const before = (await s.get('/user', { token: alice.token })).body.avatar_url as string
    expect(before).toStartWith('https://secure.gravatar.com/avatar/')
    const api = giteaApi(s.url, { token: alice.token })
    const res = await api.user.userUpdateAvatar({ image: b64(PNG_1X1) })
    expect(res.status).toBe(204)
    const url = (await s.get('/user', { token: alice.token })).body.avatar_url as string
    expect(url).toMatch(HASH_URL('avatars'))
    expect((await s.get('/users/alice')).body.avatar_url).toBe(url)
    expect((await s.get('/users/search?q=alice')).body.data[0].avatar_url).toBe(url)
    expect((await s.get('/repos/alice/pub')).body.owner.avatar_url).toBe(url)
    const served = await fetch(url)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toBe('image/png')
    expect(served.headers.get('x-content-type-options')).toBe('nosniff')
    expect(served.headers.get('cache-control')).toContain('max-age=31536000')
    expect(Buffer.from(await served.arrayBuffer()).equals(PNG_1X1)).toBe(true)
    // The same image again is the same file; another replaces it and the old file goes.
    expect((await s.post('/user/avatar', { image: b64(PNG_1X1) }, { token: alice.token })).status).toBe(204)
    expect((await s.get('/user', { token: alice.token })).body.avatar_url).toBe(url)
    expect((await s.post('/user/avatar', { image: b64(GIF_1X1) }, { token: alice.token })).status).toBe(204)
    const next = (await s.get('/user', { token: alice.token })).body.avatar_url as string
    expect(next).not.toBe(url)
    expect((await fetch(url)).status).toBe(404)
    expect(filesIn('avatars')).toEqual([next.split('/').at(-1)!])
    // Another user's same image is another file (the hash covers the owner).
    expect((await s.post('/user/avatar', { image: b64(GIF_1X1) }, { token: bob.token })).status).toBe(204)
    expect((await s.get('/user', { token: bob.token })).body.avatar_url).not.toBe(next)
  })

  test('each format is accepted and served with its own type', async () => {
    for (const [bytes, type] of [
      [png(64, 64), 'image/png'],
      [jpeg(300, 200), 'image/jpeg'],
      [gif(4096, 4096), 'image/gif'],
      [webpLossless(100, 50), 'image/webp'],
      [webpLossy(640, 480), 'image/webp'],
      [webpExtended(4096, 1), 'image/webp'],
    ] as const) {
      const res = await s.post('/user/avatar', { image: b64(bytes) }, { token: stranger.token })
      expect(res.status, type).toBe(204)
      const served = await fetch((await s.get('/user', { token: stranger.token })).body.avatar_url)
      expect(served.headers.get('content-type')).toBe(type)
      expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true)
    }
  })

  test('refusals: bad base64 400; not an image, too big, too large dimensions 422; nothing changes', async () => {
    const url = (await s.get('/user', { token: alice.token })).body.avatar_url
    const files = filesIn('avatars').sort()
    const cases: [string, number][] = [
      ['not base64 at all!', 400],
      ['iVBORw0KGgo', 400],
      [b64(new TextEncoder().encode('just some text, no image')), 422],
      ['', 422],
      [b64(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>')), 422],
      [b64(png(1, 1, AVATAR_MAX_BYTES)), 422],
      [b64(png(4097, 10)), 422],
      [b64(png(10, 5000)), 422],
      [b64(gif(5000, 1)), 422],
      [b64(jpeg(1, 4097)), 422],
      [b64(webpLossless(4097, 1)), 422],
      [b64(webpExtended(1, 16_000)), 422],
      [b64(PNG_1X1.subarray(0, 20)), 422],
      [b64(new Uint8Array([0xff, 0xd8, 0xff, 0xda, 0, 2])), 422],
    ]
    for (const [image, status] of cases) {
      const res = await s.post('/user/avatar', { image }, { token: alice.token })
      expect(res.status, image.slice(0, 30)).toBe(status)
      expect(typeof res.body.message).toBe('string')
    }
    expect((await s.post('/user/avatar', {}, { token: alice.token })).status).toBe(422)
    expect((await s.post('/user/avatar', { image: b64(PNG_1X1) })).status).toBe(401)
    expect((await s.get('/user', { token: alice.token })).body.avatar_url).toBe(url)
    expect(filesIn('avatars').sort()).toEqual(files)
  })

  test('DELETE restores the default and removes the file; unknown hashes are 404', async () => {
    const url = (await s.get('/user', { token: bob.token })).body.avatar_url as string
    expect((await s.del('/user/avatar', undefined, { token: bob.token })).status).toBe(204)
    expect((await s.get('/users/bob')).body.avatar_url).toStartWith('https://secure.gravatar.com/avatar/')
    expect((await fetch(url)).status).toBe(404)
    expect((await s.del('/user/avatar', undefined, { token: bob.token })).status).toBe(204)
    expect((await fetch(`${s.url}/avatars/${'0'.repeat(64)}`)).status).toBe(404)
    expect((await fetch(`${s.url}/avatars/..%2Fwarren.db`)).status).toBe(404)
    expect((await fetch(`${s.url}/repo-avatars/nothex`)).status).toBe(404)
  })
})

describe('organisation avatars', () => {
  test('owners upload and delete; members are refused with 403; the Organization record follows', async () => {
    expect((await s.post('/orgs/acme/avatar', { image: b64(jpeg(10, 10)) }, { token: bob.token })).status).toBe(403)
    expect((await s.post('/orgs/acme/avatar', { image: b64(jpeg(10, 10)) }, { token: stranger.token })).status).toBe(403)
    const api = giteaApi(s.url, { token: alice.token })
    expect((await api.orgs.orgUpdateAvatar('acme', { image: b64(jpeg(10, 10)) })).status).toBe(204)
    const url = (await s.get('/orgs/acme')).body.avatar_url as string
    expect(url).toMatch(HASH_URL('avatars'))
    expect((await s.get('/users/acme')).body.avatar_url).toBe(url)
    expect((await s.get('/user/orgs', { token: bob.token })).body[0].avatar_url).toBe(url)
    expect((await fetch(url)).headers.get('content-type')).toBe('image/jpeg')
    expect((await s.del('/orgs/acme/avatar', undefined, { token: bob.token })).status).toBe(403)
    expect((await api.orgs.orgDeleteAvatar('acme')).status).toBe(204)
    expect((await s.get('/orgs/acme')).body.avatar_url).toStartWith('https://secure.gravatar.com/avatar/')
    expect((await fetch(url)).status).toBe(404)
  })
})

describe('repository avatars', () => {
  test('admins upload and delete; writers 403, outsiders of a private one 404; the Repository record follows', async () => {
    expect((await s.get('/repos/alice/pub')).body.avatar_url).toBe('')
    expect((await s.post('/repos/alice/pub/avatar', { image: b64(PNG_1X1) }, { token: writer.token })).status).toBe(403)
    expect((await s.post('/repos/alice/secret/avatar', { image: b64(PNG_1X1) }, { token: stranger.token })).status).toBe(404)
    expect((await s.del('/repos/alice/secret/avatar', undefined, { token: stranger.token })).status).toBe(404)
    expect((await s.post('/repos/alice/pub/avatar', { image: b64(PNG_1X1) })).status).toBe(401)
    const api = giteaApi(s.url, { token: admin.token })
    expect((await api.repos.repoUpdateAvatar('alice', 'secret', { image: b64(webpLossless(32, 32)) })).status).toBe(204)
    const url = (await s.get('/repos/alice/secret', { token: alice.token })).body.avatar_url as string
    expect(url).toMatch(HASH_URL('repo-avatars'))
    expect((await s.get('/user/repos', { token: alice.token })).body.find((r: any) => r.name === 'secret').avatar_url).toBe(url)
    const served = await fetch(url)
    expect(served.headers.get('content-type')).toBe('image/webp')
    expect(served.headers.get('x-content-type-options')).toBe('nosniff')
    expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.from(webpLossless(32, 32)))).toBe(true)
    expect((await s.post('/repos/alice/secret/avatar', { image: 'AAAA=' }, { token: admin.token })).status).toBe(400)
    expect((await s.del('/repos/alice/secret/avatar', undefined, { token: writer.token })).status).toBe(403)
    expect((await api.repos.repoDeleteAvatar('alice', 'secret')).status).toBe(204)
    expect((await s.get('/repos/alice/secret', { token: alice.token })).body.avatar_url).toBe('')
    expect((await fetch(url)).status).toBe(404)
  })

  test('a repository made from a template with `avatar` gets the same image under its own file', async () => {
    expect((await s.post('/user/repos', { name: 'tpl', template: true, auto_init: true }, { token: alice.token })).status).toBe(201)
    expect((await s.patch('/repos/alice/tpl', { template: true }, { token: alice.token })).status).toBe(200)
    expect((await s.post('/repos/alice/tpl/avatar', { image: b64(jpeg(64, 64)) }, { token: alice.token })).status).toBe(204)
    const tplUrl = (await s.get('/repos/alice/tpl')).body.avatar_url as string
    const made = await s.post('/repos/alice/tpl/generate', { owner: 'bob', name: 'from-tpl', avatar: true }, { token: bob.token })
    expect(made.status).toBe(201)
    expect(made.body.avatar_url).toMatch(HASH_URL('repo-avatars'))
    expect(made.body.avatar_url).not.toBe(tplUrl)
    expect((await s.get('/repos/bob/from-tpl')).body.avatar_url).toBe(made.body.avatar_url)
    const served = await fetch(made.body.avatar_url)
    expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.from(jpeg(64, 64)))).toBe(true)
    // Without `avatar`, none.
    const plain = await s.post('/repos/alice/tpl/generate', { owner: 'bob', name: 'plain', git_content: true }, { token: bob.token })
    expect(plain.body.avatar_url).toBe('')
  })

  test('a deleted repository takes its avatar file with it', async () => {
    expect((await s.post('/user/repos', { name: 'gone' }, { token: alice.token })).status).toBe(201)
    expect((await s.post('/repos/alice/gone/avatar', { image: b64(gif(2, 2)) }, { token: alice.token })).status).toBe(204)
    const hash = ((await s.get('/repos/alice/gone')).body.avatar_url as string).split('/').at(-1)!
    expect(filesIn('repo-avatars')).toContain(hash)
    expect((await s.del('/repos/alice/gone', undefined, { token: alice.token })).status).toBe(204)
    expect(filesIn('repo-avatars')).not.toContain(hash)
  })
})

describe('repair', () => {
  test('files no row names (and temporary ones) are removed; named files stay', async () => {
    expect((await s.post('/repos/alice/pub/avatar', { image: b64(PNG_1X1) }, { token: alice.token })).status).toBe(204)
    const repoHash = ((await s.get('/repos/alice/pub')).body.avatar_url as string).split('/').at(-1)!
    const userHash = ((await s.get('/users/alice')).body.avatar_url as string).split('/').at(-1)!
    const stray = 'a'.repeat(64)
    mkdirSync(join(s.dataDir, 'avatars'), { recursive: true })
    writeFileSync(join(s.dataDir, 'avatars', stray), PNG_1X1)
    writeFileSync(join(s.dataDir, 'avatars', `${userHash}.x.part`), PNG_1X1)
    writeFileSync(join(s.dataDir, 'repo-avatars', 'b'.repeat(64)), PNG_1X1)
    // Only what is unchanged since `before` goes: nothing is older than a moment ago.
    expect((await repairAvatars(s.deps, { before: 0 })).unnamed).toEqual([])
    const repaired = await repairAvatars(s.deps)
    expect(repaired.unnamed.sort()).toEqual([`avatars/${stray}`, `avatars/${userHash}.x.part`, `repo-avatars/${'b'.repeat(64)}`].sort())
    expect(repaired.missing).toEqual([])
    expect(filesIn('avatars')).toContain(userHash)
    expect(filesIn('repo-avatars')).toContain(repoHash)
    expect(filesIn('repo-avatars')).not.toContain('b'.repeat(64))
    expect(filesIn('avatars')).not.toContain(stray)
    expect((await fetch(`${s.url}/repo-avatars/${repoHash}`)).status).toBe(200)
  })
})

describe('warren doctor', () => {
  test('reports avatar files no row names and removes them with --fix; named files stay', async () => {
    const userHash = ((await s.get('/users/alice')).body.avatar_url as string).split('/').at(-1)!
    const stray = 'c'.repeat(64)
    writeFileSync(join(s.dataDir, 'repo-avatars', stray), PNG_1X1)
    const avatarCheck = (r: Awaited<ReturnType<typeof doctor>>) => r.checks.find((c) => c.name === 'avatar files')!
    const found = avatarCheck(await doctor(s.deps.config, { fix: false, timeoutMs: 60_000 }))
    expect(found.ok).toBe(false)
    expect(found.details).toEqual([`repo-avatars/${stray}: no user, organisation or repository names it`])
    expect(filesIn('repo-avatars')).toContain(stray)
    const fixed = avatarCheck(await doctor(s.deps.config, { fix: true, timeoutMs: 60_000 }))
    expect(fixed.fixed).toEqual([`repo-avatars/${stray}: removed, no user, organisation or repository names it`])
    expect(filesIn('repo-avatars')).not.toContain(stray)
    expect(filesIn('avatars')).toContain(userHash)
    expect(avatarCheck(await doctor(s.deps.config, { fix: false, timeoutMs: 60_000 })).ok).toBe(true)
  })
})

describe('the settings page', () => {
  test('uploads an avatar by a multipart form (CSRF checked), shows it, refuses what is not an image, deletes it', async () => {
    const cookie = await signInByForm(s.url, writer)
    const page = async () => await (await fetch(`${s.url}/user/settings`, { headers: { cookie, accept: 'text/html' } })).text()
    const post = async (path: string, fields: Record<string, string | File>) => {
      const form = new FormData()
      for (const [k, v] of Object.entries(fields)) form.append(k, v)
      const res = await fetch(s.url + path, { method: 'POST', headers: { cookie }, body: form, redirect: 'manual' })
      return { status: res.status, location: res.headers.get('location'), html: await res.text() }
    }
    const html = await page()
    expect(html).toContain('enctype="multipart/form-data"')
    expect(html).not.toContain('/user/settings/avatar/delete')
    const csrf = csrfIn(html)!
    const file = new File([png(48, 48)], 'me.png')
    // Without the session's CSRF token: 403, nothing changes.
    expect((await post('/user/settings/avatar', { avatar: file })).status).toBe(403)
    expect((await s.get('/users/writer')).body.avatar_url).toStartWith('https://secure.gravatar.com/')
    const refused = await post('/user/settings/avatar', { _csrf: csrf, avatar: new File(['plain text'], 'notes.txt') })
    expect(refused.status).toBe(422)
    expect(refused.html).toContain('not a PNG, JPEG, GIF or WebP')
    expect((await post('/user/settings/avatar', { _csrf: csrf })).status).toBe(422)
    const saved = await post('/user/settings/avatar', { _csrf: csrf, avatar: file })
    expect([saved.status, saved.location]).toEqual([303, '/user/settings?done=avatar-saved'])
    const url = (await s.get('/users/writer')).body.avatar_url as string
    expect(url).toMatch(HASH_URL('avatars'))
    const after = await page()
    expect(after).toContain(`src="${url}"`)
    expect(after).toContain('/user/settings/avatar/delete')
    const deleted = await post('/user/settings/avatar/delete', { _csrf: csrf })
    expect([deleted.status, deleted.location]).toEqual([303, '/user/settings?done=avatar-deleted'])
    expect((await s.get('/users/writer')).body.avatar_url).toStartWith('https://secure.gravatar.com/')
    expect((await fetch(url)).status).toBe(404)
  })
})
