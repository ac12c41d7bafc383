/**
 * Gitea 1.23's user, organisation and team routes that gitea-js calls: the user's own settings,
 * through the client as it is.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { fails, ok } from './gitea-calls'

type Client = Api<unknown>

let s: TestServer
let alice: TestUser
let bob: TestUser
let asAlice: Client
let asBob: Client
let anon: Client

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  anon = giteaApi(s.url, {})
})
afterAll(() => s.stop())

describe('/user/settings', () => {
  test('GET shows the defaults; PATCH changes what it is given and keeps the rest', async () => {
    expect(await ok(asAlice.user.getUserSettings())).toEqual({
      full_name: '',
      website: '',
      description: '',
      location: '',
      language: '',
      theme: '',
      diff_view_style: '',
      hide_email: false,
      hide_activity: false,
    })
    const changed = await ok(
      asAlice.user.updateUserSettings({
        full_name: 'Alice Liddell',
        website: 'https://alice.example.com',
        description: 'down the hole',
        location: 'Oxford',
        language: 'en-GB',
        theme: 'gitea-dark',
        diff_view_style: 'split',
        hide_email: true,
        hide_activity: true,
      }),
    )
    expect(changed).toEqual({
      full_name: 'Alice Liddell',
      website: 'https://alice.example.com',
      description: 'down the hole',
      location: 'Oxford',
      language: 'en-GB',
      theme: 'gitea-dark',
      diff_view_style: 'split',
      hide_email: true,
      hide_activity: true,
    })
    const partly = await ok(asAlice.user.updateUserSettings({ location: 'Wonderland', hide_activity: false }))
    expect(partly).toEqual({ ...changed, location: 'Wonderland', hide_activity: false })
    expect(await ok(asAlice.user.getUserSettings())).toEqual(partly)

    // The profile fields are the User record's: others see them, and the hidden address is hidden.
    const seen = await ok(asBob.users.userGet('alice'))
    expect(seen.full_name).toBe('Alice Liddell')
    expect(seen.location).toBe('Wonderland')
    expect(seen.email).not.toBe('alice@example.com')
    // Bob's settings are his own.
    expect((await ok(asBob.user.getUserSettings())).full_name).toBe('')
  })

  test('signed in only; bad values are 422 in the API error shape', async () => {
    await fails(anon.user.getUserSettings(), 401)
    await fails(anon.user.updateUserSettings({ full_name: 'x' }), 401)
    for (const body of [
      { website: 'javascript:alert(1)' },
      { location: 'x'.repeat(51) },
      { full_name: 'x'.repeat(101) },
      { description: 'x'.repeat(256) },
      { language: 'english-please' },
      { theme: 't'.repeat(31) },
      { diff_view_style: 'sideways' },
      { hide_email: 'yes' },
    ]) {
      const r = await s.patch('/user/settings', body, { token: bob.token })
      expect(r.status).toBe(422)
      expect(r.body).toMatchObject({ message: expect.any(String), url: expect.any(String) })
    }
    // Nothing of the refused changes was written.
    expect((await ok(asBob.user.getUserSettings())).diff_view_style).toBe('')
  })
})
