import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { loadConfig } from '../src/config'

/** The shortest password an account may have (WARREN_MIN_PASSWORD_LENGTH), at its production value. */

let s: TestServer
let admin: TestUser

beforeAll(async () => {
  // The production minimum (tests elsewhere lower it to 1).
  s = await startTestServer({ minPasswordLength: 8 })
  admin = await s.user('root', { admin: true })
})
afterAll(() => s.stop())

describe('the shortest password', () => {
  test('refused (400, nothing written) when an admin creates a user or sets a password through the API', async () => {
    const created = await s.post('/admin/users', { username: 'shorty', email: 'shorty@example.com', password: 'seven77' }, { token: admin.token })
    expect(created.status).toBe(400)
    expect(created.body.message).toBe('password must be at least 8 characters')
    expect((await s.get('/users/shorty')).status).toBe(404)
    const ok = await s.post('/admin/users', { username: 'longer', email: 'longer@example.com', password: 'eight888', must_change_password: false }, { token: admin.token })
    expect(ok.status).toBe(201)

    const edit = await s.patch('/admin/users/longer', { login_name: 'longer', source_id: 0, password: 'short', full_name: 'Changed' }, { token: admin.token })
    expect(edit.status).toBe(400)
    expect((await s.get('/users/longer')).body.full_name).toBe('')
    // the old password still works, the new short one does not
    expect((await s.get('/user', { basic: ['longer', 'eight888'] })).status).toBe(200)
    expect((await s.get('/user', { basic: ['longer', 'short'] })).status).toBe(401)
  })

  test('WARREN_MIN_PASSWORD_LENGTH is read and bounded', () => {
    expect(loadConfig({}).minPasswordLength).toBe(8)
    expect(loadConfig({ WARREN_MIN_PASSWORD_LENGTH: '12' }).minPasswordLength).toBe(12)
    expect(() => loadConfig({ WARREN_MIN_PASSWORD_LENGTH: '0' })).toThrow('WARREN_MIN_PASSWORD_LENGTH')
    expect(loadConfig({ WARREN_SHUTDOWN_GRACE: '2.5' }).shutdownGraceMs).toBe(2500)
    expect(() => loadConfig({ WARREN_LOG_LEVEL: 'loud' })).toThrow('WARREN_LOG_LEVEL must be one of debug, info, warn, error')
  })
})
