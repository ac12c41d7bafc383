import { git, isObjectId, objectStoreOf, requireObjectIds, runGit, startGit, GitError, safeGitMessage, type GitRepo } from './run'
import { readTokens } from './tokens'
import { objectFormatOf } from './init'
import { readPeeledRefs } from './ref-files'
import { isSafeRefName } from './ref-name'
import { gitDateArg } from './ident'
import { WeightedCache } from '../lib/weighted-cache'

/**
 * Merging without a work tree: everything a pull request needs (mergeability, the merge commit of
 * each style, the compare-and-swap of the base branch), done with git plumbing on the bare
 * repository. Object ids handed in are ones git printed (or the database recorded from git);
 * branch names reach git only inside ref names built from names that passed isSafeRefName, and
 * as `values`.
 */

const checkOid = (...ids: string[]) => requireObjectIds('merge', ...ids)

/** The commit a full ref name points to, or null (read from the ref files where they tell: ref-files.ts). */
export async function readRef(repo: GitRepo, ref: string): Promise<string | null> {
  if (ref.startsWith('refs/') && isSafeRefName(ref)) {
    const inFiles = await readPeeledRefs(repo.gitDir, [ref])
    if (inFiles) return inFiles.get(ref) ?? null
  }
  const r = await runGit(['rev-parse', '--verify', '--quiet'], { ...repo, values: [`${ref}^{commit}`] })
  const sha = r.stdout.toString('utf8').trim()
  return r.code === 0 && isObjectId(sha) ? sha : null
}

/**
 * Merge bases found, by repository and the two commits: what two commit ids share never changes
 * (null: unrelated histories, git's exit 1). A failure (a missing object: 128) is not kept.
 */
const mergeBases = new WeightedCache<string | null>(20_000, () => 1)

/** The best common ancestor of two commits, or null (unrelated histories). */
export async function mergeBase(repo: GitRepo, a: string, b: string): Promise<string | null> {
  checkOid(a, b)
  const key = `${objectStoreOf(repo)}\0${a}\0${b}`
  const kept = mergeBases.get(key)
  if (kept !== undefined) return kept
  const r = await runGit(['merge-base', a, b], repo)
  const sha = r.stdout.toString('utf8').trim()
  const found = r.code === 0 && isObjectId(sha) ? sha : null
  // Kept: a base found, or none (exit 1: unrelated histories); never a failure (128: a missing object).
  if ((r.code === 0 && found) || (r.code === 1 && !sha)) mergeBases.set(key, found)
  return found
}

/** Whether `ancestor` is reachable from `descendant`. */
export async function isAncestor(repo: GitRepo, ancestor: string, descendant: string): Promise<boolean> {
  checkOid(ancestor, descendant)
  const r = await runGit(['merge-base', '--is-ancestor', ancestor, descendant], repo)
  if (r.code > 1) throw new GitError('failed', `git merge-base failed: ${safeGitMessage(r.stderr)}`, 'merge-base')
  return r.code === 0
}

export interface MergeTreeResult {
  /** The merged tree (with conflict markers where `conflicts` is not empty). */
  tree: string
  /** Paths that conflict (empty: a clean merge). */
  conflicts: string[]
}

/** At most this many conflicting paths are kept (a pull request shows them; thousands help nobody). */
export const MAX_CONFLICTS = 200

/**
 * `git merge-tree --write-tree ours theirs` (git ≥ 2.38): the three-way merge of two commits on
 * their merge base, written as a tree, with the conflicting paths. GitError when git cannot merge
 * them at all (unrelated histories, a missing object).
 */
export async function mergeTree(repo: GitRepo, ours: string, theirs: string): Promise<MergeTreeResult> {
  checkOid(ours, theirs)
  // Read as printed (the tree, then each conflicting path): a merge of 100,000 conflicts is read
  // up to MAX_CONFLICTS + 1 paths, and git stopped there.
  let tree: string | null = null
  const conflicts = new Set<string>()
  const read = await readTokens(
    startGit(['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', ours, theirs], repo),
    (token) => {
      if (tree === null) tree = token.trim()
      else if (token !== '' && (conflicts.add(token), conflicts.size > MAX_CONFLICTS)) return false
    },
    4096,
  )
  if (!read.stopped && read.code !== 0 && read.code !== 1) throw new GitError('failed', `git merge-tree failed: ${safeGitMessage(read.stderr)}`, 'merge-tree')
  if (tree === null || !isObjectId(tree)) throw new GitError('failed', 'git merge-tree gave no tree', 'merge-tree')
  const listed = [...conflicts].slice(0, MAX_CONFLICTS)
  // Exit code 1 with no path listed still means "not clean" (a conflict git could not name).
  if (!read.stopped && read.code === 1 && listed.length === 0) listed.push('')
  return { tree, conflicts: read.stopped || read.code === 1 ? listed : [] }
}

/** The first conflicting paths, for a refusal's message. */
export const conflictSummary = (paths: string[]): string => paths.filter(Boolean).slice(0, 10).join(', ') || 'conflict'

/** Who made a commit: name, e-mail, and the date as git writes it raw (`<unix seconds> <±hhmm>`; given to git in its `@` form, identEnv). */
export interface Ident {
  name: string
  email: string
  date: string
}

/** An identity for a commit made now. */
export const identNow = (name: string, email: string, unix: number): Ident => ({ name, email, date: `${unix} +0000` })

/** The environment of a commit by `author` and `committer`; their dates in git's `@` form, read for any time (gitDateArg). */
const identEnv = (author: Ident, committer: Ident) => ({
  GIT_AUTHOR_NAME: author.name,
  GIT_AUTHOR_EMAIL: author.email,
  GIT_AUTHOR_DATE: gitDateArg(author.date),
  GIT_COMMITTER_NAME: committer.name,
  GIT_COMMITTER_EMAIL: committer.email,
  GIT_COMMITTER_DATE: gitDateArg(committer.date),
})

/** Writes a commit of `tree` with `parents` (in order) and `message`; answers its id. */
export async function commitTree(repo: GitRepo, tree: string, parents: string[], message: string, author: Ident, committer: Ident = author): Promise<string> {
  checkOid(tree, ...parents)
  const args = ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p])]
  const sha = (await git(args, { ...repo, input: message.endsWith('\n') ? message : message + '\n', env: identEnv(author, committer) })).trim()
  checkOid(sha)
  return sha
}

/** Points `ref` at `sha` whatever it held (refs/pull/N/head). */
export async function setRef(repo: GitRepo, ref: string, sha: string): Promise<void> {
  checkOid(sha)
  await git(['update-ref'], { ...repo, values: [ref, sha] })
}

/**
 * Fetches `refs/heads/<branch>` of another repository on this server (a fork) into `targetRef`
 * of `repo`: only the objects `repo` lacks are copied. Answers the fetched commit, or null when
 * the branch is gone.
 */
export async function fetchBranchInto(repo: GitRepo, sourceGitDir: string, branch: string, targetRef: string): Promise<string | null> {
  const r = await runGit(['fetch', '--no-tags', '--no-write-fetch-head', '--quiet', '--no-auto-gc'], {
    ...repo,
    budget: 'long',
    values: [sourceGitDir, `+refs/heads/${branch}:${targetRef}`],
  })
  if (r.code !== 0) return null
  return readRef(repo, targetRef)
}

/**
 * Copies into `repo` the objects of `refs/heads/<branch>` of another repository on this server,
 * writing no ref (nothing points to them until a ref is moved there). Answers whether commit
 * `want` is in `repo` afterwards.
 */
export async function fetchCommitOf(repo: GitRepo, sourceGitDir: string, branch: string, want: string): Promise<boolean> {
  checkOid(want)
  await runGit(['fetch', '--no-tags', '--no-write-fetch-head', '--quiet', '--no-auto-gc'], { ...repo, budget: 'long', values: [sourceGitDir, `refs/heads/${branch}`] })
  return (await readRef(repo, want)) === want
}

/** A commit as rebasing needs it. */
export interface CommitInfo {
  sha: string
  tree: string
  parents: string[]
  author: Ident
  message: string
}

/** At most this many commits are replayed by a rebase merge (beyond, the merge is refused). */
export const MAX_REBASE_COMMITS = 1000

/**
 * The commits of `head` not on `base`, oldest first, without merge commits (what `git rebase`
 * replays); null when there are more than `max`.
 */
export async function commitsToReplay(repo: GitRepo, base: string, head: string, max = MAX_REBASE_COMMITS): Promise<CommitInfo[] | null> {
  checkOid(base, head)
  const out = await git(
    ['log', '-z', '--reverse', '--topo-order', '--no-merges', `--max-count=${max + 1}`, '--date=raw', '--format=%H%n%T%n%P%n%an%n%ae%n%ad%n%B', head, `^${base}`],
    repo,
  )
  const commits: CommitInfo[] = []
  for (const record of out.split('\0')) {
    if (!record.trim()) continue
    const [sha, tree, parents, an, ae, ad, ...message] = record.split('\n')
    commits.push({ sha: sha!, tree: tree!, parents: parents ? parents.split(' ').filter(Boolean) : [], author: { name: an!, email: ae!, date: ad! }, message: message.join('\n') })
  }
  // `--reverse` applies after --max-count: a list of max + 1 is "too many" whichever end it cut.
  return commits.length > max ? null : commits
}

/** The fixed identity of the throw-away commits cherryPickTree writes (never on any branch). */
const SCAFFOLD: Ident = { name: 'warren', email: 'warren@localhost', date: '1000000000 +0000' }

/**
 * The tree of `commit` replayed onto `onto` (a cherry-pick): the three-way merge of `onto`'s and
 * `commit`'s trees on the tree of `commit`'s parent. git 2.39's merge-tree takes no explicit merge
 * base, so the base is made one: two scaffold commits of those trees whose only common ancestor is
 * a commit of the parent's tree (objects of a few hundred bytes, never referenced, pruned by gc).
 */
export async function cherryPickTree(repo: GitRepo, onto: string, ontoTree: string, commit: CommitInfo): Promise<MergeTreeResult> {
  const parent = commit.parents[0]
  if (parent === onto) return { tree: commit.tree, conflicts: [] }
  checkOid(ontoTree, commit.tree)
  const baseTree = parent ? (await git(['rev-parse', '--verify', `${parent}^{tree}`], repo)).trim() : await emptyTreeOf(repo)
  return changeOntoTree(repo, ontoTree, baseTree, commit.tree)
}

/**
 * The change from tree `from` to tree `to` applied to `ontoTree` by a three-way merge on `from`
 * (a cherry-pick; with `from` and `to` swapped, a revert), through scaffold commits as
 * cherryPickTree explains: git's own merge, byte-exact for any file, conflicts listed.
 */
export async function changeOntoTree(repo: GitRepo, ontoTree: string, from: string, to: string): Promise<MergeTreeResult> {
  checkOid(ontoTree, from, to)
  const base = await commitTree(repo, from, [], 'merge base\n', SCAFFOLD)
  const [ours, theirs] = await Promise.all([
    commitTree(repo, ontoTree, [base], 'ours\n', SCAFFOLD),
    commitTree(repo, to, [base], 'theirs\n', SCAFFOLD),
  ])
  return mergeTree(repo, ours, theirs)
}

/** What replaying commits gave: the new tip, or the paths of the first commit that conflicts, or too many commits to replay. */
export type ReplayResult = { tip: string } | { conflicts: string[] } | { tooMany: true }

/**
 * `head`'s commits not on `onto` replayed onto it, as `git rebase` does: merge commits dropped,
 * commits that become empty skipped, authors and messages kept, `committer` committing; `head`
 * itself when `onto` is already in its history (nothing rewritten).
 */
export async function replayOnto(repo: GitRepo, onto: string, head: string, committer: Ident): Promise<ReplayResult> {
  if (await isAncestor(repo, onto, head)) return { tip: head }
  const commits = await commitsToReplay(repo, onto, head)
  if (!commits) return { tooMany: true }
  let tip = onto
  let tipTree = (await git(['rev-parse', '--verify', `${onto}^{tree}`], repo)).trim()
  for (const commit of commits) {
    const picked = await cherryPickTree(repo, tip, tipTree, commit)
    if (picked.conflicts.length) return { conflicts: picked.conflicts }
    if (picked.tree === tipTree) continue
    tip = await commitTree(repo, picked.tree, [tip], commit.message, commit.author, committer)
    tipTree = picked.tree
  }
  return { tip }
}

/** git's empty tree (SHA-1 repositories): what a root commit is compared with. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'
/** The empty tree of SHA-256 repositories. */
const EMPTY_TREE_SHA256 = '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321'

/** The repository's empty tree (by its object format): what a root commit is compared with. */
export const emptyTreeOf = async (repo: GitRepo): Promise<string> => ((await objectFormatOf(repo)) === 'sha256' ? EMPTY_TREE_SHA256 : EMPTY_TREE)
