import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, unitTeam, type TestServer, type TestUser } from './helpers'

/**
 * An attachment's download URLs (`/attachments/{uuid}`, `/{owner}/{repo}/releases/download/{tag}/{name}`)
 * answer by the attachment's own unit, as Gitea's: an issue's or a comment's file to those who may
 * read the repository's issues, a release's asset to those who may read its releases (a draft's to
 * those who may write them), in a repository where that unit is enabled; 404 to everyone else, as
 * for an attachment that does not exist. A member of a team giving the repository's code but not
 * those units got them all.
 */
describe("attachments by their unit's access", () => {
  let s: TestServer
  let owner: TestUser
  /** code read, nothing else. */
  let coder: TestUser
  /** code, issues, pulls and releases read. */
  let full: TestUser
  /** code write, releases read: sees no draft. */
  let codeWriter: TestUser
  /** code read, releases write: sees drafts. */
  let releaseWriter: TestUser
  let issueFile: { uuid: string }
  let commentFile: { uuid: string }
  let asset: { uuid: string }
  let draftAsset: { uuid: string }
  const ISSUE_BYTES = 'issue file bytes'
  const COMMENT_BYTES = 'comment file bytes'
  const ASSET_BYTES = 'release asset bytes'
  const DRAFT_BYTES = 'draft asset bytes'

  /** Uploads `text` as the multipart field `attachment` named `filename`. */
  async function upload(path: string, text: string, filename: string) {
    const form = new FormData()
    form.append('attachment', new File([Buffer.from(text)], filename))
    const res = await fetch(`${s.url}/api/v1${path}`, { method: 'POST', headers: { authorization: `token ${owner.token}` }, body: form })
    expect(res.status).toBe(201)
    return (await res.json()) as { uuid: string }
  }

  /** The status and, on 200, the body of a GET of `path` (outside /api/v1) by `who`. */
  async function download(path: string, who: TestUser | null) {
    const res = await fetch(`${s.url}${path}`, { headers: who ? { authorization: `token ${who.token}` } : {} })
    const text = await res.text()
    return res.status === 200 ? { status: 200, text } : { status: res.status }
  }

  const team = (name: string, units: Record<string, string>, member: TestUser) => unitTeam(s, owner, 'uaorg', name, units, [member])

  beforeAll(async () => {
    s = await startTestServer()
    owner = await s.user('uaowner')
    coder = await s.user('uacoder')
    full = await s.user('uafull')
    codeWriter = await s.user('uacodewriter')
    releaseWriter = await s.user('uareleasewriter')
    const token = { token: owner.token }
    expect((await s.post('/orgs', { username: 'uaorg', visibility: 'private' }, token)).status).toBe(201)
    expect((await s.post('/orgs/uaorg/repos', { name: 'hidden', private: true, auto_init: true }, token)).status).toBe(201)
    await team('coders', { 'repo.code': 'read', 'repo.issues': 'none', 'repo.pulls': 'none', 'repo.releases': 'none' }, coder)
    await team('readers', { 'repo.code': 'read', 'repo.issues': 'read', 'repo.pulls': 'read', 'repo.releases': 'read' }, full)
    await team('codewriters', { 'repo.code': 'write', 'repo.issues': 'read', 'repo.pulls': 'read', 'repo.releases': 'read' }, codeWriter)
    await team('releasewriters', { 'repo.code': 'read', 'repo.issues': 'read', 'repo.pulls': 'read', 'repo.releases': 'write' }, releaseWriter)

    expect((await s.post('/repos/uaorg/hidden/issues', { title: 'an issue' }, token)).status).toBe(201)
    issueFile = await upload('/repos/uaorg/hidden/issues/1/assets', ISSUE_BYTES, 'issue.txt')
    const comment = await s.post('/repos/uaorg/hidden/issues/1/comments', { body: 'a comment' }, token)
    expect(comment.status).toBe(201)
    commentFile = await upload(`/repos/uaorg/hidden/issues/comments/${comment.body.id}/assets`, COMMENT_BYTES, 'comment.txt')
    const release = await s.post('/repos/uaorg/hidden/releases', { tag_name: 'v1' }, token)
    expect(release.status).toBe(201)
    asset = await upload(`/repos/uaorg/hidden/releases/${release.body.id}/assets`, ASSET_BYTES, 'asset.txt')
    const draft = await s.post('/repos/uaorg/hidden/releases', { tag_name: 'v2', draft: true }, token)
    expect(draft.status).toBe(201)
    draftAsset = await upload(`/repos/uaorg/hidden/releases/${draft.body.id}/assets`, DRAFT_BYTES, 'draft.txt')
  })
  afterAll(() => s.stop())

  test("a member of a team giving the repository's code only gets none of its issues' files nor its releases' assets", async () => {
    // The member reads the repository, not its issues nor its releases.
    expect((await s.get('/repos/uaorg/hidden', { token: coder.token })).status).toBe(200)
    expect((await s.get('/repos/uaorg/hidden/issues/1', { token: coder.token })).status).toBe(404)
    expect((await s.get('/repos/uaorg/hidden/releases', { token: coder.token })).status).toBe(404)
    expect(await download(`/attachments/${issueFile.uuid}`, coder)).toEqual({ status: 404 })
    expect(await download(`/attachments/${commentFile.uuid}`, coder)).toEqual({ status: 404 })
    expect(await download(`/attachments/${asset.uuid}`, coder)).toEqual({ status: 404 })
    expect(await download('/uaorg/hidden/releases/download/v1/asset.txt', coder)).toEqual({ status: 404 })
    expect(await download(`/attachments/${draftAsset.uuid}`, coder)).toEqual({ status: 404 })
    expect(await download('/uaorg/hidden/releases/download/v2/draft.txt', coder)).toEqual({ status: 404 })
  })

  test('the owner and a member of a team giving the units get the files', async () => {
    for (const who of [owner, full, codeWriter, releaseWriter]) {
      expect(await download(`/attachments/${issueFile.uuid}`, who)).toEqual({ status: 200, text: ISSUE_BYTES })
      expect(await download(`/attachments/${commentFile.uuid}`, who)).toEqual({ status: 200, text: COMMENT_BYTES })
      expect(await download(`/attachments/${asset.uuid}`, who)).toEqual({ status: 200, text: ASSET_BYTES })
      expect(await download('/uaorg/hidden/releases/download/v1/asset.txt', who)).toEqual({ status: 200, text: ASSET_BYTES })
    }
  })

  test("a draft's asset goes to those who may write the releases, not to those who may only write the code", async () => {
    for (const who of [owner, releaseWriter]) {
      expect(await download(`/attachments/${draftAsset.uuid}`, who)).toEqual({ status: 200, text: DRAFT_BYTES })
      expect(await download('/uaorg/hidden/releases/download/v2/draft.txt', who)).toEqual({ status: 200, text: DRAFT_BYTES })
    }
    for (const who of [full, codeWriter, null]) {
      expect(await download(`/attachments/${draftAsset.uuid}`, who)).toEqual({ status: 404 })
      expect(await download('/uaorg/hidden/releases/download/v2/draft.txt', who)).toEqual({ status: 404 })
    }
  })

  test("with the releases unit turned off, a release's asset is found by no one; the issue's file still is", async () => {
    const token = { token: owner.token }
    expect((await s.patch('/repos/uaorg/hidden', { has_releases: false }, token)).status).toBe(200)
    try {
      for (const who of [owner, full]) {
        expect(await download(`/attachments/${asset.uuid}`, who)).toEqual({ status: 404 })
        expect(await download('/uaorg/hidden/releases/download/v1/asset.txt', who)).toEqual({ status: 404 })
        expect(await download(`/attachments/${issueFile.uuid}`, who)).toEqual({ status: 200, text: ISSUE_BYTES })
      }
    } finally {
      expect((await s.patch('/repos/uaorg/hidden', { has_releases: true }, token)).status).toBe(200)
    }
  })
})
