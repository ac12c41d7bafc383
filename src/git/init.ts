import { appendFileSync, existsSync, mkdirSync, rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { DEFAULT_GIT_LIMITS, git, type GitLimits, type GitRepo } from './run'

/**
 * The settings every repository Warren serves carries (new, cloned and adopted repositories
 * alike), as [section, key, value]: smart HTTP needs the first four (receive-pack must accept
 * pushes over HTTP); the last keeps pushed packs as packs (git would explode pushes of < 100
 * objects into loose objects, which every later clone must compress again; `gc --auto` still
 * consolidates packs).
 */
const SERVED_SETTINGS = [
  ['http', 'receivepack', 'true'],
  ['uploadpack', 'allowFilter', 'true'],
  ['uploadpack', 'allowAnySHA1InWant', 'true'],
  ['receive', 'denyNonFastForwards', 'false'],
  ['receive', 'unpackLimit', '1'],
] as const

/** The served settings as lines of a git config file, one section after another. */
const SERVED_CONFIG_TEXT = SERVED_SETTINGS.map(([section, key, value], i) => `${SERVED_SETTINGS[i - 1]?.[0] === section ? '' : `[${section}]\n`}\t${key} = ${value}\n`).join('')

/**
 * Creates an empty bare repository whose HEAD points at `defaultBranch` (a checked name). One git
 * process: `git init` writes a new config holding only its [core] section, so the served settings
 * are appended to it as git would write them, not set one `git config` process each. A folder
 * that was there already (git init re-initialises it, keeping its config) is configured by git.
 */
export async function initBareRepository(path: string, defaultBranch: string, limits: GitLimits = DEFAULT_GIT_LIMITS): Promise<void> {
  mkdirSync(dirname(path), { recursive: true })
  const fresh = !existsSync(path)
  await git(['init', '--bare', '--quiet', `--initial-branch=${defaultBranch}`], { cwd: dirname(path), values: [path], limits })
  if (fresh) appendFileSync(join(path, 'config'), SERVED_CONFIG_TEXT)
  else await configureServedRepository(path, limits)
}

/** Sets the served settings on an existing repository (an adopted one), replacing values it had. */
export async function configureServedRepository(path: string, limits: GitLimits): Promise<void> {
  for (const [section, key, value] of SERVED_SETTINGS) await git(['config', `${section}.${key}`, value], { gitDir: path, limits })
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
  // `--config` writes the served settings into the new repository's config as clone makes it.
  const settings = SERVED_SETTINGS.flatMap(([section, key, value]) => ['--config', `${section}.${key}=${value}`])
  await git(['clone', '--bare', '--quiet', '--template=', ...settings], { cwd: dirname(path), values: [source, path], limits, budget: 'long' })
  await git(['remote', 'remove', 'origin'], { gitDir: path, limits })
}

/** Removes a repository folder (and its owner folder stays). */
export function removeRepositoryFolder(path: string): void {
  rmSync(path, { recursive: true, force: true })
}

/**
 * The repository's object format: `extensions.objectformat` of its config, `sha1` when unset.
 * Read from the config file itself (git writes the setting there when it makes a repository, and
 * reads it from there only), not by a git process: a line `objectformat = sha256` (any case, any
 * spaces, quoted or not) in an [extensions] section.
 */
export async function objectFormatOf(repo: GitRepo): Promise<'sha1' | 'sha256'> {
  const text = await readFile(join(repo.gitDir, 'config'), 'utf8').catch(() => '')
  let section = ''
  for (const line of text.split('\n')) {
    const header = /^\s*\[\s*([A-Za-z0-9.-]+)\s*\]/.exec(line)
    if (header) section = header[1]!.toLowerCase()
    else if (section === 'extensions' && /^\s*objectformat\s*=\s*"?sha256"?\s*(?:[#;].*)?$/i.test(line)) return 'sha256'
  }
  return 'sha1'
}
