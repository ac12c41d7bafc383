/**
 * Organisation labels (Gitea 1.15+), through gitea-js: owners write them, whoever sees the
 * organisation reads them; the issues of the organisation's repositories may carry them (another
 * organisation's are refused), the repository's label list keeps to its own. Refusals change nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { giteaApi, type Api } from 'gitea-js'
import { contentMark } from './db-snapshot'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { makeOrg } from './access-fixtures'
import { missingGiteaFields } from './gitea-types'

type Client = Api<unknown>
let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser
let asAlice: Client, asBob: Client, asCarol: Client, anon: Client
let otherLabel: number
let repoLabel: number

const statusOf = async (call: Promise<{ status: number }>) => (await call.catch((e: { status: number }) => e)).status

beforeAll(async () => {
  s = await startTestServer()
  ;[alice, bob, carol] = [await s.user('alice'), await s.user('bob'), await s.user('carol')]
  ;[asAlice, asBob, asCarol, anon] = [alice, bob, carol].map((u) => giteaApi(s.url, { token: u.token })).concat(giteaApi(s.url, {})) as Client[]
  await makeOrg(s, 'acme', alice, [bob])
  await makeOrg(s, 'rival', carol)
  await asAlice.orgs.createOrgRepo('acme', { name: 'anvil' })
  await asAlice.user.createCurrentUserRepo({ name: 'own' })
  otherLabel = (await asCarol.orgs.orgCreateLabel('rival', { name: 'rival-bug', color: '#ff0000' })).data.id!
  repoLabel = (await asAlice.repos.issueCreateLabel('acme', 'anvil', { name: 'local', color: '00ff00' })).data.id!
})
afterAll(() => s.stop())

describe('organisation labels', () => {
  test("owners create, edit and list them; the record is Gitea's Label at the organisation's URL", async () => {
    const created = await asAlice.orgs.orgCreateLabel('acme', { name: 'org-bug', color: 'AA0000', description: 'for every repo' })
    expect(created.status).toBe(201)
    expect(created.data).toMatchObject({ name: 'org-bug', color: 'aa0000', description: 'for every repo' })
    expect(created.data.url).toBe(`${s.url}/api/v1/orgs/acme/labels/${created.data.id}`)
    // exclusive (scoped labels) and is_archived are features Warren does not have yet.
    expect(missingGiteaFields('Label', created.data, ['exclusive', 'is_archived'])).toEqual([])
    await asAlice.orgs.orgCreateLabel('acme', { name: 'org-feature', color: '#0000aa' })
    const edited = await asAlice.orgs.orgEditLabel('acme', created.data.id!, { description: 'edited' })
    expect(edited.data.description).toBe('edited')
    expect((await asBob.orgs.orgGetLabel('acme', created.data.id!)).data.name).toBe('org-bug')
    const list = await anon.orgs.orgListLabels('acme', { limit: 1 })
    expect(list.data.map((l) => l.name)).toEqual(['org-bug'])
    expect(list.headers.get('X-Total-Count')).toBe('2')
    expect(list.headers.get('Link')).toContain('rel="next"')
    // The repository's own label is not one of the organisation's, and the other way round.
    expect(await statusOf(asAlice.orgs.orgGetLabel('acme', repoLabel))).toBe(404)
    expect(await statusOf(asAlice.repos.issueGetLabel('acme', 'anvil', created.data.id!))).toBe(404)
  })

  test('refusals change nothing: a member who is no owner (403), anonymous (401), an unknown organisation (404), a bad colour (422)', async () => {
    const mark = contentMark(s.deps.db)
    const before = await mark()
    expect(await statusOf(asBob.orgs.orgCreateLabel('acme', { name: 'x', color: '#000000' }))).toBe(403)
    expect(await statusOf(asBob.orgs.orgEditLabel('acme', otherLabel, { name: 'y' }))).toBe(403)
    expect(await statusOf(asBob.orgs.orgDeleteLabel('acme', otherLabel))).toBe(403)
    expect(await statusOf(anon.orgs.orgCreateLabel('acme', { name: 'x', color: '#000000' }))).toBe(401)
    expect(await statusOf(anon.orgs.orgGetLabel('acme', otherLabel))).toBe(401)
    expect(await statusOf(asAlice.orgs.orgCreateLabel('nowhere', { name: 'x', color: '#000000' }))).toBe(404)
    expect(await statusOf(asAlice.orgs.orgCreateLabel('acme', { name: 'x', color: 'red' }))).toBe(422)
    // Another organisation's label is not this one's: 404 to edit; deleting it is Gitea's silent 204.
    expect(await statusOf(asAlice.orgs.orgEditLabel('acme', otherLabel, { name: 'mine' }))).toBe(404)
    expect(await statusOf(asAlice.orgs.orgDeleteLabel('acme', otherLabel))).toBe(204)
    expect(await mark()).toBe(before)
  })

  test("an issue of the organisation's repository carries its labels; another organisation's are refused", async () => {
    const orgLabels = (await anon.orgs.orgListLabels('acme')).data
    const bug = orgLabels.find((l) => l.name === 'org-bug')!
    const issue = (await asAlice.repos.issueCreateIssue('acme', 'anvil', { title: 'rusty', labels: [bug.id!] })).data
    expect(issue.labels?.map((l) => l.name)).toEqual(['org-bug'])
    const both = await asAlice.repos.issueAddLabel('acme', 'anvil', issue.number!, { labels: [repoLabel] })
    expect(both.data.map((l) => l.name)).toEqual(['local', 'org-bug'])
    expect(both.data.find((l) => l.name === 'org-bug')!.url).toBe(bug.url)
    // The repository's list shows its own labels only (as Gitea's).
    expect((await anon.repos.issueListLabels('acme', 'anvil')).data.map((l) => l.name)).toEqual(['local'])

    const mark = contentMark(s.deps.db)
    const before = await mark()
    expect(await statusOf(asAlice.repos.issueAddLabel('acme', 'anvil', issue.number!, { labels: [otherLabel] }))).toBe(422)
    // A repository of a person has no organisation labels.
    const own = (await asAlice.repos.issueCreateIssue('alice', 'own', { title: 'mine' })).data
    const afterIssue = await mark()
    expect(await statusOf(asAlice.repos.issueAddLabel('alice', 'own', own.number!, { labels: [bug.id!] }))).toBe(422)
    expect(await mark()).toBe(afterIssue)
    expect(before).not.toBe(afterIssue)

    // Deleting the organisation's label takes it off the issue.
    expect((await asAlice.orgs.orgDeleteLabel('acme', bug.id!)).status).toBe(204)
    expect((await anon.repos.issueGetLabels('acme', 'anvil', issue.number!)).data.map((l) => l.name)).toEqual(['local'])
  })
})
