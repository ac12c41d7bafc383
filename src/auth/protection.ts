import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import { perConnection, type Db } from '../db/client'
import { branchProtections, tagProtections, teamUsers, type BranchProtectionRow, type TagProtectionRow } from '../db/schema'
import { compileGlob } from '../lib/glob'
import { cachedGlob } from '../lib/file-patterns'
import { accessLevel, AccessMode, type RepoRow } from './access'
import type { UserRow } from './caller'

/**
 * Branch and tag protection as access rules (Gitea's models/git/protected_branch.go and
 * protected_tag.go): which rule protects a branch, who may push, force-push or merge to it, who
 * may create or delete a tag. The push decision (src/push) enforces them on every ref move; the
 * branch record (src/convert/branch.ts) shows them.
 */

export type { BranchProtectionRow, TagProtectionRow }

/** The ids of a JSON list column. */
export const idsOf = (json: string): number[] => JSON.parse(json) as number[]
export const stringsOf = (json: string): string[] => JSON.parse(json) as string[]

/** Gitea's IsRuleNameSpecial: a rule name with glob syntax is a pattern, otherwise a branch name. */
export const isPlainRuleName = (name: string) => !/[*?[\]{}\\]/.test(name)

/** Whether a rule protects `branch`: its name, case-insensitively, or its glob (`*` stops at `/`). */
export function ruleMatches(rule: Pick<BranchProtectionRow, 'ruleName'>, branch: string): boolean {
  if (isPlainRuleName(rule.ruleName)) return rule.ruleName.toLowerCase() === branch.toLowerCase()
  return cachedGlob(rule.ruleName.toLowerCase(), '/')?.matches(branch.toLowerCase()) ?? false
}

/** A repository's rules by priority, then age: prepared once per database (every branch record reads them). */
const branchRulesStatement = perConnection((db: Db) =>
  db
    .select()
    .from(branchProtections)
    .where(eq(branchProtections.repoId, sql.placeholder('repoId')))
    .orderBy(asc(branchProtections.priority), asc(branchProtections.id))
    .prepare(),
)

/** A repository's branch rules in the order they apply: plain names first, then by priority, then age. */
export async function branchRulesOf(db: Db, repoId: number): Promise<BranchProtectionRow[]> {
  const rows = await branchRulesStatement(db).execute({ repoId })
  return [...rows.filter((r) => isPlainRuleName(r.ruleName)), ...rows.filter((r) => !isPlainRuleName(r.ruleName))]
}

/** The rule protecting `branch` (Gitea's GetFirstMatchProtectedBranchRule), or undefined. */
export const ruleFor = (rules: BranchProtectionRow[], branch: string) => rules.find((r) => ruleMatches(r, branch))

/** Whether `user` is listed, or is a member of a listed team. */
export async function inAllowList(db: Db, user: UserRow | null, userIds: number[], teamIds: number[]): Promise<boolean> {
  if (!user) return false
  if (userIds.includes(user.id)) return true
  if (!teamIds.length) return false
  const found = await db.select({ id: teamUsers.id }).from(teamUsers).where(and(eq(teamUsers.uid, user.id), inArray(teamUsers.teamId, teamIds))).limit(1)
  return found.length > 0
}

/** Who moves a ref, as the protection rules see them: a user, or a deploy key (no user). */
export interface Mover {
  user: UserRow | null
  deployKey: boolean
  /** The user's access to the repository. */
  mode: AccessMode
}

/** Gitea's CanUserPush, with its deploy key branch: may `mover` push (not force) to a branch `rule` protects. */
export async function mayPushTo(db: Db, rule: BranchProtectionRow, mover: Mover): Promise<boolean> {
  if (!rule.canPush) return false
  if (mover.deployKey) return !rule.enableWhitelist || rule.whitelistDeployKeys
  if (!rule.enableWhitelist) return mover.mode >= AccessMode.Write
  return await inAllowList(db, mover.user, idsOf(rule.whitelistUserIds), idsOf(rule.whitelistTeamIds))
}

/** Gitea's CanUserForcePush: may `mover` rewrite a branch `rule` protects. */
export async function mayForcePushTo(db: Db, rule: BranchProtectionRow, mover: Mover): Promise<boolean> {
  if (!rule.canForcePush) return false
  if (mover.deployKey) return rule.canPush && (!rule.enableForcePushAllowlist || rule.forcePushAllowlistDeployKeys)
  if (!rule.enableForcePushAllowlist) return await mayPushTo(db, rule, mover)
  return await inAllowList(db, mover.user, idsOf(rule.forcePushAllowlistUserIds), idsOf(rule.forcePushAllowlistTeamIds))
}

/** Gitea's IsUserAllowedToMerge: the merge whitelist when enabled, otherwise write access. */
export async function mayMergeInto(db: Db, rule: BranchProtectionRow | undefined, user: UserRow, mode: AccessMode): Promise<boolean> {
  if (!rule || !rule.enableMergeWhitelist) return mode >= AccessMode.Write
  return await inAllowList(db, user, idsOf(rule.mergeWhitelistUserIds), idsOf(rule.mergeWhitelistTeamIds))
}

/** What a branch's record says of its protection, for `user` (the Branch record's fields). */
export async function branchProtectionView(db: Db, rules: BranchProtectionRow[], branch: string, user: UserRow | null, repo: RepoRow, mode: AccessMode) {
  const rule = ruleFor(rules, branch)
  const canWrite = mode >= AccessMode.Write && !repo.isArchived
  if (!rule) return { rule, userCanPush: canWrite, userCanMerge: canWrite }
  const mover: Mover = { user, deployKey: false, mode }
  return {
    rule,
    userCanPush: canWrite && (await mayPushTo(db, rule, mover)),
    userCanMerge: canWrite && !!user && (await mayMergeInto(db, rule, user, mode)),
  }
}

/** The access a user has for the protection rules (repository write or more). */
export const moverMode = async (db: Db, user: UserRow | null, repo: RepoRow) => (user ? await accessLevel(db, user, repo) : AccessMode.None)

// Tags.

/**
 * A `/regex/` pattern runs in JavaScript's backtracking engine (Gitea's Go regexp is linear):
 * patterns that could backtrack without bound are refused when the rule is written — back
 * references, look-arounds, and a repeated group that itself repeats or alternates.
 */
export function regexProblem(source: string): string | null {
  if (/\\[1-9]|\\k<|\(\?[=!<]/.test(source)) return 'back references and look-arounds are not allowed'
  if (/\((?:[^()\\]|\\.)*(?:[*+|]|\{\d)(?:[^()\\]|\\.)*\)\s*(?:[*+?]|\{\d)/.test(source)) return 'a repeated group may not itself repeat or alternate'
  try {
    new RegExp(source)
  } catch (e) {
    return (e as Error).message
  }
  return null
}

const isRegexPattern = (pattern: string) => pattern.length >= 2 && pattern.startsWith('/') && pattern.endsWith('/')

/** Why a tag name pattern cannot be used, or null. */
export function tagPatternProblem(pattern: string): string | null {
  if (!pattern.trim()) return 'name_pattern is empty'
  if (isRegexPattern(pattern)) return regexProblem(pattern.slice(1, -1))
  try {
    compileGlob(pattern)
  } catch (e) {
    return (e as Error).message
  }
  return null
}

/** Whether a tag rule's pattern matches `tag` (Gitea: `/regex/` or a glob, case-sensitive). */
export function tagRuleMatches(rule: Pick<TagProtectionRow, 'namePattern'>, tag: string): boolean {
  const p = rule.namePattern
  if (isRegexPattern(p)) {
    if (regexProblem(p.slice(1, -1))) return false
    return new RegExp(p.slice(1, -1)).test(tag)
  }
  return cachedGlob(p, '')?.matches(tag) ?? false
}

export const tagRulesOf = async (db: Db, repoId: number): Promise<TagProtectionRow[]> =>
  await db.select().from(tagProtections).where(eq(tagProtections.repoId, repoId)).orderBy(asc(tagProtections.id))

/** Gitea's IsUserAllowedToControlTag: a tag no rule matches is free; otherwise one matching rule must list the user (or a team of theirs). */
export async function mayControlTag(db: Db, rules: TagProtectionRow[], tag: string, user: UserRow | null): Promise<boolean> {
  let allowed = true
  for (const rule of rules) {
    if (!tagRuleMatches(rule, tag)) continue
    if (await inAllowList(db, user, idsOf(rule.allowlistUserIds), idsOf(rule.allowlistTeamIds))) return true
    allowed = false
  }
  return allowed
}
