// runs in one half: postgresql
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { GRAPH_FIXTURE_COMMITS, pushGraphFixture } from './web-graph-fixture'
import { signInByForm } from './web-session'
import { repoPath } from '../src/git/run'
import { CommitLanes, MAX_COLUMNS } from '../src/lib/commit-lanes'
import { refAnswerHits, refStateReads } from '../src/git/ref-answers'

/**
 * The commit graph (`/{o}/{r}/graph`, Gitea's) and the history's commit search
 * (`/{o}/{r}/commits/{kind}/{ref}/search`) over plain HTTP: lanes drawn on the server for
 * branches that fork and merge, refs on their rows (branches, tags, a pull request's head),
 * paging, the branch filter, hidden pull request refs, monochrome; bad pages and branches refused
 * with their reason; an empty repository's empty state; a private repository invisible to
 * strangers; the search's keywords, `author:` / `committer:` / `after:` / `before:`, `all`, and
 * hostile texts read literally, never as git options.
 */

let s: TestServer
let alice: TestUser, stranger: TestUser
let aliceCookie: string
let sha: (rev: string) => Promise<string>
const TOTAL = GRAPH_FIXTURE_COMMITS

const page = (path: string, cookie?: string) => fetch(s.url + path, { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) }, redirect: 'manual' })
const html = async (path: string, cookie?: string) => {
  const res = await page(path, cookie)
  return { status: res.status, text: await res.text(), headers: res.headers }
}
/** The commit ids of a graph page's rows, in order. */
const rowsIn = (text: string) => [...text.matchAll(/<li id="commit-([0-9a-f]{40})">/g)].map((m) => m[1]!)
/** The subjects of a commit list (the history's and the search's). */
const subjectsIn = (text: string) => [...text.matchAll(/<li><a href="\/alice\/[^/]+\/commit\/[0-9a-f]{40}">([^<]*)<\/a>/g)].map((m) => m[1]!)

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  stranger = await s.user('stranger')
  sha = await pushGraphFixture(s, alice, 'graph')
  await pushGraphFixture(s, alice, 'hidden', true)
  expect((await s.post('/repos/alice/graph/pulls', { head: 'side', base: 'master', title: 'Side change' }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'empty' }, { token: alice.token })).status).toBe(201)
  aliceCookie = await signInByForm(s.url, alice)
}, 600_000)
afterAll(() => s.stop())

describe('the commit graph', () => {
  test('a page of 100 rows in date order, children before parents, with their lanes, refs and links', async () => {
    const { status, text } = await html('/alice/graph/graph')
    expect(status).toBe(200)
    const rows = rowsIn(text)
    expect(rows.length).toBe(100)
    expect(rows[0]).toBe(await sha('long'))
    // The drawing: one dot per row, lines as paths, hidden from assistive technology (the list says it all).
    const svg = /<svg class="graph-lanes"[^>]*>([\s\S]*?)<\/svg>/.exec(text)
    expect(svg).not.toBeNull()
    expect(svg![0]).toContain('aria-hidden="true"')
    expect([...svg![1]!.matchAll(/<circle /g)].length).toBe(100)
    expect(svg![1]).toMatch(/<path class="lane-\d+" d="M[\d.]+ [\d.]+V/)
    expect(text).toContain('<section class="box graph" aria-label="Commits by lane">')
    expect(text).not.toContain('wider than')
    // Each row's short id links to the commit page.
    expect(text).toContain(`<a class="sha" href="/alice/graph/commit/${rows[0]}"><code>${rows[0]!.slice(0, 10)}</code></a>`)
    expect(text).toContain('<span class="subject">Step 120</span>')
    expect(text).toContain('href="/alice/graph/src/branch/long"><span class="sr-only">Branch </span>long</a>')
    // The pager: 127 commits, two pages.
    expect(text).toContain('Page 1 of 2')
    expect(text).toContain('href="/alice/graph/graph?page=2"')
  })

  test('page 2: the rest, the merge drawn as two lanes joining, branches, a tag and the pull request head on their rows', async () => {
    const { status, text } = await html('/alice/graph/graph?page=2')
    expect(status).toBe(200)
    const rows = rowsIn(text)
    expect(rows.length).toBe(TOTAL - 100)
    const merge = await sha('master')
    const at = (id: string) => rows.indexOf(id)
    // Children before parents: the merge before both its parents, the fork point after both branches.
    expect(at(merge)).toBeGreaterThanOrEqual(0)
    expect(at(merge)).toBeLessThan(at(await sha('feature')))
    expect(at(merge)).toBeLessThan(at(await sha('master^1')))
    expect(at(await sha('feature~1'))).toBeLessThan(at(await sha('v1.0^{commit}')))
    expect(at(await sha('side'))).toBeLessThan(at(await sha('side~1')))
    // The merge's dot is marked; a curve (C) takes a lane into another column.
    expect(text).toMatch(/<circle class="lane-\d+ merge"/)
    expect(text).toMatch(/<path class="lane-\d+" d="[^"]*C/)
    // Lines come down from page 1 into the first row.
    expect(text).toMatch(/<path class="lane-\d+" d="M[\d.]+ 0[VC]/)
    // Refs: the branches, the tag, the pull request's head (to the pull request).
    expect(text).toContain('<a class="ref ref-branch" href="/alice/graph/src/branch/master"><span class="sr-only">Branch </span>master</a>')
    expect(text).toContain('<a class="ref ref-tag" href="/alice/graph/src/tag/v1.0"><span class="sr-only">Tag </span>v1.0</a>')
    expect(text).toContain('<a class="ref ref-pull" href="/alice/graph/pulls/1"><span class="sr-only">Pull request </span>#1</a>')
    expect(text).toContain('<span class="subject">Merge feature</span>')
    expect(text).toContain('Page 2 of 2')
  })

  test('hide-pr-refs leaves the pull request head unnamed; monochrome draws in one colour', async () => {
    const hidden = await html('/alice/graph/graph?page=2&hide-pr-refs=true')
    expect(hidden.status).toBe(200)
    expect(hidden.text).not.toContain('ref-pull')
    expect(rowsIn(hidden.text).length).toBe(TOTAL - 100)
    expect(hidden.text).toContain('name="hide-pr-refs" value="true" checked')
    const mono = await html('/alice/graph/graph?mode=monochrome')
    expect(mono.text).toContain('<section class="box graph monochrome"')
    expect(mono.text).toContain('<option value="monochrome" selected>')
    // Any other mode is colour (Gitea's).
    expect((await html('/alice/graph/graph?mode=<b>x</b>')).text).toContain('<section class="box graph" ')
  })

  test('branch= shows only those branches (several allowed), their ancestors with them', async () => {
    const feature = await html('/alice/graph/graph?branch=feature')
    expect(feature.status).toBe(200)
    expect(rowsIn(feature.text)).toEqual([await sha('feature'), await sha('feature~1'), await sha('feature~2'), await sha('feature~3')])
    expect(feature.text).toContain('value="feature" checked')
    const two = await html('/alice/graph/graph?branch=feature&branch=side')
    expect(new Set(rowsIn(two.text))).toEqual(new Set(await Promise.all(['feature', 'feature~1', 'side', 'side~1', 'feature~2', 'feature~3'].map(sha))))
    // Full ref names too, as Gitea's choices send them: a tag, a pull request head.
    expect(rowsIn((await html('/alice/graph/graph?branch=refs/tags/v1.0')).text).length).toBe(2)
    expect(rowsIn((await html('/alice/graph/graph?branch=refs/pull/1/head')).text)[0]).toBe(await sha('side'))
  })

  test('a bad page or branch is refused with its reason (4xx); a page past the end is a clear empty page', async () => {
    for (const bad of ['abc', '0', '-1', '1.5', '501', '99999999999']) {
      const r = await html(`/alice/graph/graph?page=${bad}`)
      expect(r.status).toBe(400)
      expect(r.text).toContain('page must be a whole number from 1 to 500')
      expect(rowsIn(r.text)).toEqual([])
    }
    const past = await html('/alice/graph/graph?page=3')
    expect(past.status).toBe(200)
    expect(past.text).toContain('No commits on page 3: the graph has 127 commits')
    const missing = await html('/alice/graph/graph?branch=nope')
    expect(missing.status).toBe(404)
    expect(missing.text).toContain('branch does not exist: nope')
    for (const hostile of ['--output=x', '-h', 'a..b', 'refs/notes/commits', 'HEAD@{1}', 'x y']) {
      const r = await html(`/alice/graph/graph?branch=${encodeURIComponent(hostile)}`)
      expect(r.status).toBe(400)
      expect(r.text).toContain('not a branch name')
    }
    // A NUL is refused before the page (the app's storable-input check).
    expect((await html('/alice/graph/graph?branch=a%00b')).status).toBe(422)
    const many = Array.from({ length: 21 }, (_, i) => `branch=b${i}`).join('&')
    expect((await html(`/alice/graph/graph?${many}`)).status).toBe(400)
    // Nothing git could have written (an --output file) in the repository's folder.
    expect(existsSync(`${repoPath(s.deps.config.dataDir, 'alice', 'graph')}/x`)).toBe(false)
  })

  test('a page is kept while the refs hold, and follows them at once: a branch made, then deleted', async () => {
    const first = await html('/alice/graph/graph')
    const before = refAnswerHits()
    const reads = refStateReads()
    expect((await html('/alice/graph/graph')).text).toBe(first.text)
    // Two answers kept: the graph's page and the branch chooser's list, under one reading of the refs.
    expect(refAnswerHits()).toBe(before + 2)
    expect(refStateReads()).toBe(reads + 1)
    expect(first.text).not.toContain('href="/alice/graph/src/branch/fresh"')
    expect((await s.post('/repos/alice/graph/branches', { new_branch_name: 'fresh', old_branch_name: 'long' }, { token: alice.token })).status).toBe(201)
    const made = await html('/alice/graph/graph')
    expect(rowsIn(made.text)).toEqual(rowsIn(first.text))
    expect(made.text).toContain('href="/alice/graph/src/branch/fresh"><span class="sr-only">Branch </span>fresh</a>')
    expect((await s.del('/repos/alice/graph/branches/fresh', undefined, { token: alice.token })).status).toBe(204)
    expect((await html('/alice/graph/graph')).text).toBe(first.text)
  })

  test('an empty repository: an empty state, not an error', async () => {
    const r = await html('/alice/empty/graph')
    expect(r.status).toBe(200)
    expect(r.text).toContain('This repository is empty: it has no commits yet.')
    expect(r.text).not.toContain('<svg')
  })

  test('a private repository: a 404 to anonymous visitors and strangers, the graph to its owner', async () => {
    expect((await page('/alice/hidden/graph')).status).toBe(404)
    const strangerCookie = await signInByForm(s.url, stranger)
    expect((await page('/alice/hidden/graph', strangerCookie)).status).toBe(404)
    expect((await page('/alice/hidden/commits/branch/master/search?q=Side&all=true', strangerCookie)).status).toBe(404)
    const own = await html('/alice/hidden/graph', aliceCookie)
    expect(own.status).toBe(200)
    expect(rowsIn(own.text).length).toBe(100)
  })

  test('the history links the graph, and has the search box', async () => {
    const { text } = await html('/alice/graph/commits/branch/master')
    expect(text).toContain('<a href="/alice/graph/graph">Commit graph</a>')
    expect(text).toContain('<form class="row commit-search" method="get" action="/alice/graph/commits/branch/master/search" role="search" aria-label="Commits">')
    expect(text).toContain('name="q"')
    expect(text).toContain('name="all"')
    // The empty repository's history links it too.
    expect((await html('/alice/empty/commits')).text).toContain('<a href="/alice/empty/graph">Commit graph</a>')
  })
})

describe('the commit search', () => {
  const search = (ref: string, q: string, extra = '') => html(`/alice/graph/commits/branch/${ref}/search?q=${encodeURIComponent(q)}${extra}`)

  test('keywords in the message, in any case, any of them; the history list', async () => {
    const r = await search('master', 'FEATURE')
    expect(r.status).toBe(200)
    expect(subjectsIn(r.text)).toEqual(['Merge feature', 'Feature more', 'Feature work'])
    expect(r.text).toContain('matching “FEATURE”')
    expect(r.text).toContain('value="FEATURE"')
    expect(subjectsIn((await search('master', 'initial moves')).text)).toEqual(['Master moves', 'Initial'])
    // Only the branch's history, unless all.
    expect(subjectsIn((await search('master', 'side')).text)).toEqual([])
    expect((await search('master', 'side')).text).toContain('No commits match “side”.')
    expect(subjectsIn((await search('master', 'side', '&all=true')).text)).toEqual(['Side change'])
    expect((await search('master', 'side', '&all=true')).text).toContain('name="all" value="true" checked')
  })

  test('author:, committer:, after:, before: as Gitea reads them', async () => {
    expect(subjectsIn((await search('master', 'author:bob')).text)).toEqual(['Feature work'])
    expect(subjectsIn((await search('master', 'author:BOB@example')).text)).toEqual(['Feature work'])
    expect(subjectsIn((await search('master', 'feature author:alice')).text)).toEqual(['Merge feature', 'Feature more'])
    expect(subjectsIn((await search('master', 'committer:carol initial')).text)).toEqual(['Initial'])
    expect(subjectsIn((await search('master', 'committer:alice')).text)).toEqual([])
    // Initial is 2020-01-01, Second the 2nd, Feature work the 3rd, Feature more the 4th.
    expect(subjectsIn((await search('master', 'after:2020-01-02 before:2020-01-03T12:00:00Z')).text)).toEqual(['Feature work', 'Second'])
    const bad = await search('master', 'after:yesterday')
    expect(bad.status).toBe(422)
    expect(bad.text).toContain('after: takes a date as YYYY-MM-DD')
  })

  test('a keyword that begins a commit id finds that commit; results are at most 100', async () => {
    const side = await sha('side')
    expect(subjectsIn((await search('master', side.slice(0, 8))).text)).toEqual(['Side change'])
    const steps = await search('long', 'step')
    expect(subjectsIn(steps.text).length).toBe(100)
    expect(steps.text).toContain('(the first 100)')
  })

  test('hostile texts are read literally, never as options; bad texts are a 422 with the reason; no text goes back to the history', async () => {
    const dir = repoPath(s.deps.config.dataDir, 'alice', 'graph')
    const before = readdirSync(dir).sort()
    for (const q of ['--output=x', '-h', '--all', '--format=%H', 'author:--output=y', 'committer:--exec=z', '.*', '[', '\\', '<script>alert(1)</script>']) {
      const r = await search('master', q)
      expect(r.status).toBe(200)
      expect(subjectsIn(r.text)).toEqual([])
      expect(r.text).not.toContain('<script>alert(1)')
    }
    expect(readdirSync(dir).sort()).toEqual(before)
    const long = await search('master', 'a'.repeat(201))
    expect(long.status).toBe(422)
    expect(long.text).toContain('at most 200 characters')
    const control = await search('master', 'a\nb')
    expect(control.status).toBe(422)
    expect(control.text).toContain('control characters')
    const empty = await page('/alice/graph/commits/branch/master/search?q=%20')
    expect(empty.status).toBe(303)
    expect(empty.headers.get('location')).toBe('/alice/graph/commits/branch/master')
    // A tag's history is searched from the tag.
    expect(subjectsIn((await html('/alice/graph/commits/tag/v1.0/search?q=n')).text)).toEqual(['Second', 'Initial'])
  })
})

describe('the lanes (lib/commit-lanes.ts)', () => {
  test('a fork and a merge: the merge opens a lane for its second parent, the fork point closes it', () => {
    const lanes = new CommitLanes()
    // M merges A (first parent) and B; both come from R.
    const m = lanes.add('M', ['A', 'B'], true)!
    const a = lanes.add('A', ['R'], true)!
    const b = lanes.add('B', ['R'], true)!
    const r = lanes.add('R', [], true)!
    expect([m.column, a.column, b.column, r.column]).toEqual([0, 0, 1, 0])
    // B's lane left M's dot (column 0) for column 1; at R both lanes end in its dot.
    expect(a.above).toContainEqual({ from: 0, to: 1, flow: b.flow })
    expect(r.above.map((l) => [l.from, l.to])).toEqual([
      [0, 0],
      [1, 0],
    ])
    expect(lanes.below()).toEqual([])
    expect(lanes.cut).toBe(false)
  })

  test('more branches than columns: clamped into the last column, said to be cut; rows before the page draw nothing', () => {
    const lanes = new CommitLanes()
    const tips = MAX_COLUMNS + 8
    for (let i = 0; i < tips; i++) expect(lanes.add(`T${i}`, ['R'], false)).toBeNull()
    const root = lanes.add('R', [], true)!
    expect(root.column).toBe(0)
    expect(root.above.length).toBe(MAX_COLUMNS)
    expect(Math.max(...root.above.map((l) => l.from))).toBe(MAX_COLUMNS - 1)
    expect(lanes.cut).toBe(true)
    // Once those lanes have ended, a page after them is whole.
    const later = new CommitLanes()
    for (let i = 0; i < tips; i++) later.add(`T${i}`, ['R'], false)
    later.add('R', ['S'], false)
    expect(later.add('S', [], true)).toEqual({ id: 'S', column: 0, flow: 1, above: [{ from: 0, to: 0, flow: 1 }] })
    expect(later.cut).toBe(false)
  })
})
