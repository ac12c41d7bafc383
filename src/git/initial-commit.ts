import { git, type GitRepo } from './run'
import { gitDateArg } from './ident'

export interface InitialFile {
  /** A plain file name at the root of the tree (no '/'). */
  name: string
  content: string
}

export interface Signature {
  name: string
  email: string
  /** Unix seconds. */
  when: number
}

const FILE_NAME = /^[^/\x00\n\t]+$/

/**
 * Writes a first commit with `files` at the tree's root onto `refs/heads/<branch>` of the bare
 * repository `repo`, with git plumbing only (no working tree): hash-object for each blob,
 * mktree, commit-tree, then update-ref (which refuses to overwrite an existing branch).
 * Returns the commit id.
 */
export async function writeInitialCommit(
  repo: GitRepo,
  branch: string,
  files: InitialFile[],
  author: Signature,
  message = 'Initial commit',
): Promise<string> {
  const entries: string[] = []
  for (const file of [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (!FILE_NAME.test(file.name) || file.name === '.' || file.name === '..') throw new Error(`bad file name ${file.name}`)
    const blob = (await git(['hash-object', '-w', '--stdin'], { ...repo, input: file.content })).trim()
    entries.push(`100644 blob ${blob}\t${file.name}\n`)
  }
  const tree = (await git(['mktree'], { ...repo, input: entries.join('') })).trim()
  const date = gitDateArg(`${author.when} +0000`)
  const env = {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: author.name,
    GIT_COMMITTER_EMAIL: author.email,
    GIT_COMMITTER_DATE: date,
  }
  const commit = (await git(['commit-tree', tree], { ...repo, input: message + '\n', env })).trim()
  // The empty old value makes update-ref fail if the branch already exists.
  await git(['update-ref'], { ...repo, values: [`refs/heads/${branch}`, commit, ''] })
  return commit
}
