import { mkdirSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { git } from './run'

/** Creates an empty bare repository whose HEAD points at `defaultBranch`. */
export async function initBareRepository(path: string, defaultBranch: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true })
  await git(['init', '--bare', '--quiet', `--initial-branch=${defaultBranch}`, '--', path], { cwd: dirname(path) })
  // Smart HTTP needs these; receive-pack must accept pushes over HTTP.
  await git(['config', 'http.receivepack', 'true'], { gitDir: path })
  await git(['config', 'uploadpack.allowFilter', 'true'], { gitDir: path })
  await git(['config', 'uploadpack.allowAnySHA1InWant', 'true'], { gitDir: path })
  await git(['config', 'receive.denyNonFastForwards', 'false'], { gitDir: path })
  // Keep pushed packs as packs (git would explode pushes of < 100 objects into loose objects,
  // which every later clone must compress again); `gc --auto` still consolidates packs.
  await git(['config', 'receive.unpackLimit', '1'], { gitDir: path })
}

/** Removes a repository folder (and its owner folder stays). */
export function removeRepositoryFolder(path: string): void {
  rmSync(path, { recursive: true, force: true })
}
