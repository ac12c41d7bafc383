/**
 * Issue templates and the template chooser's config (Gitea 1.23's issue_templates and
 * issue_config), read from the default branch, through gitea-js.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { missingGiteaFields } from './gitea-types'
import { MAX_TEMPLATE_BYTES } from '../src/modules/issue-templates/service'

let s: TestServer
let alice: TestUser
let asAlice: Client
type Client = Api<unknown>
const dirs: string[] = []

/** Pushes `files` as one commit on `branch` of alice/`repo` (a new repository). */
async function pushRepo(repo: string, files: Record<string, string>, branch = 'main') {
  await asAlice.user.createCurrentUserRepo({ name: repo, default_branch: 'main' })
  const dir = tempDir()
  dirs.push(dir)
  await gitOk(dir, 'init', '-q', `--initial-branch=${branch}`)
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true })
    writeFileSync(join(dir, p), text)
  }
  await gitOk(dir, 'add', '-A')
  await gitOk(dir, 'commit', '-q', '-m', 'templates')
  await gitOk(dir, 'push', '-q', remoteUrl(s.url, `alice/${repo}.git`, 'alice', alice.token), branch)
}

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  asAlice = giteaApi(s.url, { token: alice.token })
  await pushRepo('tracker', {
    '.gitea/ISSUE_TEMPLATE/bug.md': '---\nname: Bug report\nabout: Something is broken\ntitle: "[bug] "\nlabels: bug, triage\nref: fix-branch\n---\n\n## What happened\n',
    '.gitea/ISSUE_TEMPLATE/form.yaml': [
      'name: Feature form',
      'description: Ask for a feature',
      'labels: [enhancement]',
      'assignees: alice',
      'ref: refs/tags/v1',
      'body:',
      '  - type: markdown',
      '    attributes: { value: "Thanks!" }',
      '  - type: textarea',
      '    id: idea',
      '    attributes: { label: Idea }',
      '    validations: { required: true }',
      '',
    ].join('\n'),
    '.gitea/ISSUE_TEMPLATE/config.yaml': 'blank_issues_enabled: false\ncontact_links:\n  - name: Forum\n    url: https://forum.example.com\n    about: Ask there\n',
    '.gitea/ISSUE_TEMPLATE/notes.txt': 'not a template',
    '.gitea/ISSUE_TEMPLATE/broken.md': 'no front matter here',
    '.gitea/ISSUE_TEMPLATE/huge.md': '---\nname: huge\n---\n' + 'x'.repeat(MAX_TEMPLATE_BYTES),
    '.github/ISSUE_TEMPLATE/other.md': '---\nname: From GitHub folder\n---\nbody\n',
  })
  await pushRepo('bad-config', { '.github/issue_template/config.yml': 'contact_links:\n  - name: No url\n    about: missing\n' })
  await asAlice.user.createCurrentUserRepo({ name: 'empty' })
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('issue templates', () => {
  test("the default branch's templates, Markdown and forms, as Gitea's IssueTemplate; invalid files left out with Gitea's warning", async () => {
    const r = await asAlice.repos.repoGetIssueTemplates('alice', 'tracker')
    expect(r.data.map((t) => t.file_name)).toEqual(['.gitea/ISSUE_TEMPLATE/broken.md', '.gitea/ISSUE_TEMPLATE/bug.md', '.gitea/ISSUE_TEMPLATE/form.yaml', '.github/ISSUE_TEMPLATE/other.md'])
    expect(r.headers.get('X-Gitea-Warning')).toBe('error occurs when parsing issue template: count=1')
    const [broken, bug, form] = r.data
    // Gitea 1.23 takes a Markdown file without front matter as all content, named by its file.
    expect(broken).toMatchObject({ name: 'broken.md', about: 'no front matter here', content: 'no front matter here', title: '', body: null })
    expect(bug as unknown).toEqual({
      name: 'Bug report',
      title: '[bug] ',
      about: 'Something is broken',
      labels: ['bug', 'triage'],
      assignees: [],
      ref: 'refs/heads/fix-branch',
      body: null,
      content: '\n## What happened\n',
      file_name: '.gitea/ISSUE_TEMPLATE/bug.md',
    })
    expect(missingGiteaFields('IssueTemplate', bug!)).toEqual([])
    expect(form).toMatchObject({ name: 'Feature form', about: 'Ask for a feature', labels: ['enhancement'], assignees: ['alice'], ref: 'refs/tags/v1', content: '' })
    expect(form!.body).toEqual([
      { type: 'markdown', id: '0', attributes: { value: 'Thanks!' }, validations: {}, visible: [] },
      { type: 'textarea', id: 'idea', attributes: { label: 'Idea' }, validations: { required: true }, visible: [] },
    ])
    // An empty repository has none; an anonymous reader of a public one reads them too.
    expect((await asAlice.repos.repoGetIssueTemplates('alice', 'empty')).data).toEqual([])
    expect((await giteaApi(s.url, {}).repos.repoGetIssueTemplates('alice', 'tracker')).data.length).toBe(4)
  })

  test("the chooser's config, its validation, and the default when it is missing or invalid", async () => {
    expect((await asAlice.repos.repoGetIssueConfig('alice', 'tracker')).data).toEqual({
      blank_issues_enabled: false,
      contact_links: [{ name: 'Forum', url: 'https://forum.example.com', about: 'Ask there' }],
    })
    expect((await asAlice.repos.repoValidateIssueConfig('alice', 'tracker')).data).toEqual({ valid: true, message: '' })
    expect((await asAlice.repos.repoGetIssueConfig('alice', 'bad-config')).data).toEqual({ blank_issues_enabled: true, contact_links: [] })
    expect((await asAlice.repos.repoValidateIssueConfig('alice', 'bad-config')).data).toEqual({ valid: false, message: 'contact_link at position 1 is missing url key' })
    expect((await asAlice.repos.repoGetIssueConfig('alice', 'empty')).data).toEqual({ blank_issues_enabled: true, contact_links: [] })
  })
})
