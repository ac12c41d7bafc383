import { and, asc, eq } from 'drizzle-orm'
import { createHash, randomBytes } from 'node:crypto'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { actionRunnerTokens, actionSecrets, actionVariables, type ActionSecretRow, type ActionVariableRow } from '../../db/schema'
import { badRequest, conflict, notFound } from '../../lib/errors'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { openSecret, sealSecret } from '../../lib/secret-box'
import { nowUnix } from '../../lib/time'
import { MAX_ACTIONS_VALUE } from './model'

/**
 * Gitea Actions' settings that need no runner (Gitea's services/secrets, models/secret,
 * models/actions/variable.go and runner_token.go): secrets, variables and runner registration
 * tokens of a holder, a repository, a user or organisation, or the whole site (tokens only).
 * Who may is the routes' concern (the pipeline); here, the names and the rows.
 */

/** Who holds a setting: a repository, a user or organisation, or the site. */
export type ActionsHolder = { repoId: number } | { ownerId: number } | 'global'

function holderColumns(holder: ActionsHolder): { scope: string; ownerId: number | null; repoId: number | null } {
  if (holder === 'global') return { scope: 'global', ownerId: null, repoId: null }
  if ('repoId' in holder) return { scope: `r${holder.repoId}`, ownerId: null, repoId: holder.repoId }
  return { scope: `u${holder.ownerId}`, ownerId: holder.ownerId, repoId: null }
}

const NAME = /^[A-Z_][A-Z0-9_]*$/i
const RESERVED_PREFIX = /^GIT(EA|HUB)_/i
/** Gitea's column holds 255 characters. */
const MAX_NAME = 255

/**
 * A secret's or variable's name as Gitea checks it (GitHub's naming rules): letters, digits and
 * `_`, not starting with a digit, nor with `GITEA_` or `GITHUB_`; stored in upper case. 400 otherwise.
 */
export function actionsName(name: string, what: 'secret' | 'variable'): string {
  if (name.length > MAX_NAME || !NAME.test(name) || RESERVED_PREFIX.test(name)) throw badRequest(`invalid ${what} name`)
  return name.toUpperCase()
}

/** Code points of a text (a surrogate pair is one). */
function codePoints(text: string): number {
  let n = 0
  for (const _ of text) n++
  return n
}

/**
 * A value within Gitea's bound, counted as Gitea counts it: a secret's UTF-8 bytes (`len(data)`),
 * a variable's characters (`utf8.RuneCountInString`); 400 "data too long" past it, as Gitea's
 * invalid argument.
 */
function boundedValue(value: string, what: 'secret' | 'variable'): string {
  const size = what === 'secret' ? Buffer.byteLength(value, 'utf8') : codePoints(value)
  if (size > MAX_ACTIONS_VALUE) throw badRequest('data too long')
  return value
}

// Secrets

export async function listSecrets(deps: AppDeps, holder: ActionsHolder, page: Page | null): Promise<Paged<ActionSecretRow>> {
  return await selectPage(deps.db, actionSecrets, eq(actionSecrets.scope, holderColumns(holder).scope), asc(actionSecrets.name), page)
}

/** Creates or replaces a secret: `true` when it was created (201), `false` when updated (204). */
export async function putSecret(deps: AppDeps, holder: ActionsHolder, rawName: string, data: string): Promise<boolean> {
  const name = actionsName(rawName, 'secret')
  const columns = holderColumns(holder)
  const sealed = sealSecret(deps.config.dataDir, boundedValue(data, 'secret'))
  return await writeTransaction(deps.db, async () => {
    const now = nowUnix()
    const existing = (await deps.db
      .select({ id: actionSecrets.id })
      .from(actionSecrets)
      .where(and(eq(actionSecrets.scope, columns.scope), eq(actionSecrets.name, name))))[0]
    if (existing) {
      await deps.db.update(actionSecrets).set({ dataSealed: sealed, updatedUnix: now }).where(eq(actionSecrets.id, existing.id))
      return false
    }
    await deps.db.insert(actionSecrets).values({ ...columns, name, dataSealed: sealed, createdUnix: now, updatedUnix: now })
    return true
  })
}

export async function deleteSecret(deps: AppDeps, holder: ActionsHolder, rawName: string): Promise<void> {
  const name = actionsName(rawName, 'secret')
  const gone = await deps.db
    .delete(actionSecrets)
    .where(and(eq(actionSecrets.scope, holderColumns(holder).scope), eq(actionSecrets.name, name)))
    .returning({ id: actionSecrets.id })
  if (gone.length === 0) throw notFound('secret not found')
}

// Variables

/** Gitea keeps a textarea's line breaks as `\n` (ReserveLineBreakForTextarea), then bounds the value. */
const variableValue = (value: string) => boundedValue(value.replace(/\r\n/g, '\n'), 'variable')

export async function listVariables(deps: AppDeps, holder: ActionsHolder, page: Page | null): Promise<Paged<ActionVariableRow>> {
  return await selectPage(deps.db, actionVariables, eq(actionVariables.scope, holderColumns(holder).scope), asc(actionVariables.name), page)
}

async function findVariable(deps: AppDeps, scope: string, name: string): Promise<ActionVariableRow | undefined> {
  return (await deps.db
    .select()
    .from(actionVariables)
    .where(and(eq(actionVariables.scope, scope), eq(actionVariables.name, name))))[0]
}

/** A variable by name (any case): 400 for a name Gitea refuses, 404 when there is none. */
export async function getVariable(deps: AppDeps, holder: ActionsHolder, rawName: string): Promise<ActionVariableRow> {
  const variable = await findVariable(deps, holderColumns(holder).scope, actionsName(rawName, 'variable'))
  if (!variable) throw notFound('variable not found')
  return variable
}

/** Creates a variable: 409 when the holder has one of that name. */
export async function createVariable(deps: AppDeps, holder: ActionsHolder, rawName: string, value: string): Promise<void> {
  const name = actionsName(rawName, 'variable')
  const columns = holderColumns(holder)
  const data = variableValue(value)
  await writeTransaction(deps.db, async () => {
    if (await findVariable(deps, columns.scope, name)) throw conflict('variable name already exists')
    const now = nowUnix()
    await deps.db.insert(actionVariables).values({ ...columns, name, data, createdUnix: now, updatedUnix: now })
  })
}

/** Changes a variable's value, and its name when `newName` is given (409 when taken). */
export async function updateVariable(deps: AppDeps, holder: ActionsHolder, rawName: string, input: { name?: string; value: string }): Promise<void> {
  const name = actionsName(rawName, 'variable')
  const newName = input.name ? actionsName(input.name, 'variable') : name
  const { scope } = holderColumns(holder)
  const data = variableValue(input.value)
  await writeTransaction(deps.db, async () => {
    const variable = await findVariable(deps, scope, name)
    if (!variable) throw notFound('variable not found')
    if (newName !== name && (await findVariable(deps, scope, newName))) throw conflict('variable name already exists')
    await deps.db.update(actionVariables).set({ name: newName, data, updatedUnix: nowUnix() }).where(eq(actionVariables.id, variable.id))
  })
}

export async function deleteVariable(deps: AppDeps, holder: ActionsHolder, rawName: string): Promise<void> {
  const name = actionsName(rawName, 'variable')
  const gone = await deps.db
    .delete(actionVariables)
    .where(and(eq(actionVariables.scope, holderColumns(holder).scope), eq(actionVariables.name, name)))
    .returning({ id: actionVariables.id })
  if (gone.length === 0) throw notFound('variable not found')
}

// Runner registration tokens

/**
 * The holder's runner registration token: the current one, or a new one when it has none or
 * `reset` is asked (Gitea's GetRegistrationToken; `reset`, Gitea 1.24's POST, which retires the
 * old one). 40 hexadecimal characters, kept sealed, with its hash for a runner's registration.
 */
export async function runnerRegistrationToken(deps: AppDeps, holder: ActionsHolder, reset = false): Promise<string> {
  const columns = holderColumns(holder)
  const dataDir = deps.config.dataDir
  if (!reset) {
    const current = (await deps.db.select().from(actionRunnerTokens).where(eq(actionRunnerTokens.scope, columns.scope)))[0]
    if (current) return openSecret(dataDir, current.tokenSealed)
  }
  const token = randomBytes(20).toString('hex')
  const row = { tokenSealed: sealSecret(dataDir, token), tokenHash: createHash('sha256').update(token).digest('hex'), createdUnix: nowUnix() }
  return await writeTransaction(deps.db, async () => {
    const current = (await deps.db.select().from(actionRunnerTokens).where(eq(actionRunnerTokens.scope, columns.scope)))[0]
    if (current && !reset) return openSecret(dataDir, current.tokenSealed)
    if (current) await deps.db.update(actionRunnerTokens).set(row).where(eq(actionRunnerTokens.id, current.id))
    else await deps.db.insert(actionRunnerTokens).values({ ...columns, ...row })
    return token
  })
}
