import { mkdirSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { DEFAULT_GIT_LIMITS, git, type GitLimits } from './run'

/** Creates an empty bare repository whose HEAD points at `defaultBranch` (a checked name). */
export async function initBareRepository(path: string, defaultBranch: string, limits: GitLimits = DEFAULT_GIT_LIMITS): Promise<void> {
  mkdirSync(dirname(path), { recursive: true })
  await git(['init', '--bare', '--quiet', `--initial-branch=${defaultBranch}`], { cwd: dirname(path), values: [path], limits })
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

/** Removes a repository folder (and its owner folder stays). */
export function removeRepositoryFolder(path: string): void {
  rmSync(path, { recursive: true, force: true })
}
