/**
 * Reactions on issues and comments (Gitea 1.23's issue_reaction.go), through gitea-js: the
 * allowed set, 201 then 200 for the same reaction, a locked issue, paging, and what deleting a
 * comment or a person takes with it. Refusals change nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { giteaApi, type Api } from 'gitea-js'
import { contentMark } from './db-snapshot'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'
import { missingGiteaFields } from './gitea-types'
import { issues, reactions } from '../src/db/schema'

type Client = Api<unknown>
let w: TrackerWorld
let asReader: Client, asWriter: Client, asOutsider: Client, anon: Client
let issueIndex: number
let commentId: number

/** The status of a gitea-js call, whether it resolved or threw its response. */
const statusOf = async (call: Promise<{ status: number }>) => (await call.catch((e: { status: number }) => e)).status

beforeAll(async () => {
  w = await startTrackerWorld()
  await w.repo('moods')
  await w.repo('secret', { private: true })
  const client = (token?: string) => giteaApi(w.s.url, token ? { token } : {})
  ;[asReader, asWriter, asOutsider, anon] = [client(w.reader.token), client(w.writer.token), client(w.outsider.token), client()]
  issueIndex = (await asWriter.repos.issueCreateIssue('owner', 'moods', { title: 'feelings' })).data.number!
  commentId = (await asWriter.repos.issueCreateComment('owner', 'moods', issueIndex, { body: 'first' })).data.id!
})
afterAll(() => w.s.stop())

describe('reactions', () => {
  test("an issue's reaction: 201 the first time, 200 with the same record the second; every field of Gitea's Reaction", async () => {
    const first = await asReader.repos.issuePostIssueReaction('owner', 'moods', issueIndex, { content: 'heart' })
    expect(first.status).toBe(201)
    expect(first.data.content).toBe('heart')
    expect(first.data.user?.login).toBe('reader')
    expect(missingGiteaFields('Reaction', first.data)).toEqual([])
    const again = await asReader.repos.issuePostIssueReaction('owner', 'moods', issueIndex, { content: 'heart' })
    expect(again.status).toBe(200)
    expect(again.data).toEqual(first.data)
    await asWriter.repos.issuePostIssueReaction('owner', 'moods', issueIndex, { content: '+1' })
    await asOutsider.repos.issuePostIssueReaction('owner', 'moods', issueIndex, { content: 'eyes' })
    const list = await anon.repos.issueGetIssueReactions('owner', 'moods', issueIndex)
    expect(list.data.map((r) => `${r.user?.login}:${r.content}`)).toEqual(['reader:heart', 'writer:+1', 'outsider:eyes'])
    expect(list.headers.get('X-Total-Count')).toBe('3')
    const page = await anon.repos.issueGetIssueReactions('owner', 'moods', issueIndex, { page: 2, limit: 1 })
    expect(page.data.map((r) => r.content)).toEqual(['+1'])
    expect(page.headers.get('Link')).toContain('rel="next"')
  })

  test('refusals change nothing: an unknown reaction (403), anonymous (401), a hidden repository (404), an unknown issue (404)', async () => {
    const mark = contentMark(w.s.deps.db)
    const before = await mark()
    expect(await statusOf(asReader.repos.issuePostIssueReaction('owner', 'moods', issueIndex, { content: 'thumbsup' }))).toBe(403)
    expect(await statusOf(asReader.repos.issuePostIssueReaction('owner', 'moods', issueIndex, {}))).toBe(403)
    expect(await statusOf(anon.repos.issuePostIssueReaction('owner', 'moods', issueIndex, { content: 'heart' }))).toBe(401)
    expect(await statusOf(asOutsider.repos.issuePostIssueReaction('owner', 'secret', 1, { content: 'heart' }))).toBe(404)
    expect(await statusOf(asReader.repos.issuePostIssueReaction('owner', 'moods', 999, { content: 'heart' }))).toBe(404)
    expect(await statusOf(asReader.repos.issuePostCommentReaction('owner', 'moods', 999999, { content: 'heart' }))).toBe(404)
    expect(await mark()).toBe(before)
  })

  test('a locked issue takes reactions from writers only (403 for a reader, nothing changed)', async () => {
    const locked = (await asWriter.repos.issueCreateIssue('owner', 'moods', { title: 'locked' })).data
    await w.s.deps.db.update(issues).set({ isLocked: true }).where(eq(issues.id, locked.id!))
    const mark = contentMark(w.s.deps.db)
    const before = await mark()
    expect(await statusOf(asReader.repos.issuePostIssueReaction('owner', 'moods', locked.number!, { content: 'laugh' }))).toBe(403)
    expect(await statusOf(asReader.repos.issueDeleteIssueReaction('owner', 'moods', locked.number!, { content: 'laugh' }))).toBe(403)
    expect(await mark()).toBe(before)
    expect((await asWriter.repos.issuePostIssueReaction('owner', 'moods', locked.number!, { content: 'laugh' })).status).toBe(201)
  })

  test("a comment's reactions: given, listed whole, taken back (200); deleting the comment takes its reactions", async () => {
    expect((await asReader.repos.issuePostCommentReaction('owner', 'moods', commentId, { content: 'rocket' })).status).toBe(201)
    expect((await asWriter.repos.issuePostCommentReaction('owner', 'moods', commentId, { content: 'rocket' })).status).toBe(201)
    const list = await anon.repos.issueGetCommentReactions('owner', 'moods', commentId)
    expect(list.data.map((r) => r.user?.login)).toEqual(['reader', 'writer'])
    // The issue's own reactions do not include its comments'.
    expect((await anon.repos.issueGetIssueReactions('owner', 'moods', issueIndex)).data.some((r) => r.content === 'rocket')).toBe(false)
    const removed = await w.s.del(`/repos/owner/moods/issues/comments/${commentId}/reactions`, { content: 'rocket' }, { token: w.reader.token })
    expect(removed.status).toBe(200)
    expect((await anon.repos.issueGetCommentReactions('owner', 'moods', commentId)).data.map((r) => r.user?.login)).toEqual(['writer'])
    // Taking back a reaction one never gave is no error (as Gitea).
    expect((await w.s.del(`/repos/owner/moods/issues/comments/${commentId}/reactions`, { content: 'rocket' }, { token: w.reader.token })).status).toBe(200)
    await asWriter.repos.issueDeleteComment('owner', 'moods', commentId)
    expect(await w.s.deps.db.select().from(reactions).where(eq(reactions.commentId, commentId))).toEqual([])
  })

  test("deleting a person takes their reactions", async () => {
    const gone = await w.s.user('gone')
    const asGone = giteaApi(w.s.url, { token: gone.token })
    await asGone.repos.issuePostIssueReaction('owner', 'moods', issueIndex, { content: 'confused' })
    expect((await w.s.deps.db.select().from(reactions).where(eq(reactions.userId, gone.user.id))).length).toBe(1)
    const admin = await w.s.user('root', { admin: true })
    expect((await w.s.del('/admin/users/gone', undefined, { token: admin.token })).status).toBe(204)
    expect(await w.s.deps.db.select().from(reactions).where(eq(reactions.userId, gone.user.id))).toEqual([])
    expect((await anon.repos.issueGetIssueReactions('owner', 'moods', issueIndex)).data.some((r) => r.content === 'confused')).toBe(false)
  })
})
