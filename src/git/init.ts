import { mkdirSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { DEFAULT_GIT_LIMITS, git, runGit, type GitLimits, type GitRepo } from './run'

/** Creates an empty bare repository whose HEAD points at `defaultBranch` (a checked name). */
export async function initBareRepository(path: string, defaultBranch: string, limits: GitLimits = DEFAULT_GIT_LIMITS): Promise<void> {
  mkdirSync(dirname(path), { recursive: true })
  await git(['init', '--bare', '--quiet', `--initial-branch=${defaultBranch}`], { cwd: dirname(path), values: [path], limits })
  await configureServedRepository(path, limits)
}

/** The settings every repository Warren serves carries (set on new and cloned repositories alike). */
export async function configureServedRepository(path: string, limits: GitLimits): Promise<void> {
  const config = (key: string, value: string) => git(['config', key, value], { gitDir: path, limits })
  // Smart HTTP needs these; receive-pack must accept pushes over HTTP.
  await config('http.receivepack', 'true')
  await config('uploadpack.allowFilter', 'true')
  await config('uploadpack.allowAnySHA1InWant', 'true')
  await config('receive.denyNonFastForwards', 'false')
  // Keep pushed packs as packs (git would explode pushes of < 100 objects into loose objects,
  // which every later clone must compress again); `gc --auto` still consolidates packs.
  await config('receive.unpackLimit', '1')
}

/**
 * A bare copy of the local repository `source` at `path` (a fork): `git clone --bare` from a
 * plain path, which git does as a local clone, hard-linking the files of objects/ instead of
 * copying them (and copying them when the two folders are on different file systems). The two
 * repositories share those files' blocks on disk but are independent from then on: deleting,
 * repacking or garbage-collecting one never touches the other's objects, unlike a clone with
 * alternates (`--shared`), which would break when its source is deleted or pruned. No hook
 * templates are copied, and the `origin` remote (the source's server path) is removed.
 * The long time limit applies: the copy grows with the repository.
 */
export async function cloneBareRepository(source: string, path: string, limits: GitLimits = DEFAULT_GIT_LIMITS): Promise<void> {
  mkdirSync(dirname(path), { recursive: true })
  await git(['clone', '--bare', '--quiet', '--template='], { cwd: dirname(path), values: [source, path], limits, budget: 'long' })
  await git(['remote', 'remove', 'origin'], { gitDir: path, limits })
  await configureServedRepository(path, limits)
}

/** Removes a repository folder (and its owner folder stays). */
export function removeRepositoryFolder(path: string): void {
  rmSync(path, { recursive: true, force: true })
}

/** The repository's object format: `extensions.objectformat` of its config, `sha1` when unset. */
export async function objectFormatOf(repo: GitRepo): Promise<'sha1' | 'sha256'> {
  const r = await runGit(['config', '--get', 'extensions.objectformat'], { gitDir: repo.gitDir, limits: repo.limits })
  return r.stdout.toString('utf8').trim().toLowerCase() === 'sha256' ? 'sha256' : 'sha1'
}
