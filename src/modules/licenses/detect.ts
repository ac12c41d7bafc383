import type { AppDeps } from '../../deps'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { readObject } from '../../git/objects'
import { folderTree, treeEntries } from '../../git/tree'
import { WeightedCache } from '../../lib/weighted-cache'
import { repoTemplates } from '../repos/template-names'
import { defaultBranchCommit } from '../issue-templates/service'

/**
 * The licenses of a repository (Gitea's `/repos/{o}/{r}/licenses`): the license files at the root
 * of the default branch (LICENSE, LICENSE.md, COPYING, COPYING.LESSER, UNLICENSE, ...), each
 * matched against the license texts Warren knows (the ones `auto_init` writes, one source:
 * `modules/repos/templates`). A file's text and each license's are read as sets of word pairs
 * (case, punctuation and layout ignored, the templates' placeholders left out); the license whose
 * set the file's overlaps most (Dice's coefficient) names the file when the overlap is at least
 * MATCH_AT. Linear in the file, which is bounded (MAX_LICENSE_BYTES); the answer for a blob is
 * kept by its id.
 */

/** Files read per repository at most, and the largest one read (the longest license known, AGPL-3.0, is some 34 KB). */
export const MAX_LICENSE_FILES = 8
export const MAX_LICENSE_BYTES = 128 * 1024
/** The overlap of word pairs from which a file is taken to be a license. */
export const MATCH_AT = 0.9

/** Names Gitea takes for license files: LICENSE, LICENCE, COPYING, UNLICENSE, with a suffix or extension. */
const LICENSE_FILE = /^(?:(?:un)?licen[cs]es?|copying)(?:[.\-_][\w.\-]*)?$/i
/** The placeholders of the license texts, filled in when a repository is made. */
const PLACEHOLDER = /<year>|\[yyyy\]|\[year\]|<owner>|<copyright holders>|\[name of copyright owner\]|<name of author>|\[fullname\]/gi

/** The set of consecutive word pairs of a text (words: runs of letters and digits, lower case). */
function wordPairs(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
  const pairs = new Set<string>()
  for (let i = 1; i < words.length; i++) pairs.add(`${words[i - 1]} ${words[i]}`)
  return pairs
}

function dice(a: Set<string>, b: Set<string>): number {
  if (!a.size || !b.size) return 0
  const [small, large] = a.size <= b.size ? [a, b] : [b, a]
  let shared = 0
  for (const p of small) if (large.has(p)) shared++
  return (2 * shared) / (a.size + b.size)
}

let known: Promise<[string, Set<string>][]> | null = null
/** Each known license's word pairs, made on first use. */
const knownLicenses = () =>
  (known ??= repoTemplates().then(({ LICENSE_TEMPLATES }) =>
    Object.entries(LICENSE_TEMPLATES).map(([key, text]) => [key, wordPairs(text.replace(PLACEHOLDER, ' '))] as [string, Set<string>]),
  ))

/** The SPDX id a license text matches best, or null when none matches at MATCH_AT. */
export async function matchLicense(text: string): Promise<string | null> {
  const pairs = wordPairs(text.replace(PLACEHOLDER, ' '))
  let best: string | null = null
  let bestScore = MATCH_AT
  for (const [key, licensePairs] of await knownLicenses()) {
    // A set less than MATCH_AT/(2-MATCH_AT) the size of the other can never reach MATCH_AT.
    const ratio = Math.min(pairs.size, licensePairs.size) / Math.max(pairs.size, licensePairs.size, 1)
    if (ratio < MATCH_AT / (2 - MATCH_AT)) continue
    const score = dice(pairs, licensePairs)
    if (score >= bestScore) [best, bestScore] = [key, score]
  }
  return best
}

/** Each license file's answer by blob id (null: no known license); an id is one entry. */
const byBlob = new WeightedCache<string | null>(20_000, () => 1)

/** The SPDX ids of the licenses found at the root of the default branch, sorted, each once. */
export async function repoLicenses(deps: AppDeps, ctx: RepoContext): Promise<string[]> {
  const sha = await defaultBranchCommit(deps, ctx)
  if (!sha) return []
  const git = gitRepoOf(deps, ctx)
  const root = await folderTree(git, sha, [])
  const entries = root ? ((await treeEntries(git, root)) ?? []) : []
  const files = entries.filter((e) => (e.kind === 'file' || e.kind === 'executable') && LICENSE_FILE.test(e.path)).slice(0, MAX_LICENSE_FILES)
  const found = new Set<string>()
  for (const file of files) {
    let id = byBlob.get(file.oid)
    if (id === undefined) {
      const blob = await readObject(git, file.oid, MAX_LICENSE_BYTES)
      id = blob?.content ? await matchLicense(blob.content.toString('utf8')) : null
      byBlob.set(file.oid, id)
    }
    if (id) found.add(id)
  }
  return [...found].sort()
}
