import { and, eq, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { accessTokens, emailAddresses, users } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { hashPassword, hashToken, newTokenSecret } from '../../auth/secrets'
import { notFound, unprocessable } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { checkEmail, checkMaxSize, checkOwnerName } from '../../lib/validate'

export interface NewUser {
  username: string
  email: string
  password: string
  fullName?: string
  isAdmin?: boolean
  mustChangePassword?: boolean
  loginName?: string
  sourceId?: number
}

/** User (type 0) or organisation (type 1) by name, case-insensitive. */
export function findOwnerByName(deps: AppDeps, name: string): UserRow | undefined {
  return deps.db.select().from(users).where(eq(users.lowerName, name.toLowerCase())).get()
}

/** A user (not an organisation) by name, or 404. */
export function getUserByName(deps: AppDeps, name: string): UserRow {
  const user = findOwnerByName(deps, name)
  if (!user || user.type !== 0) throw notFound(`user does not exist [name: ${name}]`)
  return user
}

/** 422 when a user or organisation already holds the name (they share one name space). */
export function assertNameFree(deps: AppDeps, name: string): void {
  if (findOwnerByName(deps, name)) throw unprocessable(`user already exists [name: ${name}]`, 'UserName')
}

/** 422 when any account already uses the address. */
export function assertEmailFree(deps: AppDeps, email: string): void {
  const taken = deps.db.select({ id: emailAddresses.id }).from(emailAddresses).where(eq(emailAddresses.lowerEmail, email.toLowerCase())).get()
  if (taken) throw unprocessable(`e-mail already in use [email: ${email}]`, 'Email')
}

/** Validates and creates a user with its primary e-mail; the password is hashed. */
export async function createUser(deps: AppDeps, input: NewUser): Promise<UserRow> {
  checkOwnerName(input.username)
  checkEmail(input.email)
  checkMaxSize(input.fullName, 100, 'FullName')
  if (!input.password) throw unprocessable('Required', 'Password')
  checkMaxSize(input.password, 255, 'Password')
  const passwordHash = await hashPassword(deps.config, input.password)
  return writeTransaction(deps.db, () => {
    assertNameFree(deps, input.username)
    assertEmailFree(deps, input.email)
    const now = nowUnix()
    const user = deps.db
      .insert(users)
      .values({
        name: input.username,
        lowerName: input.username.toLowerCase(),
        fullName: input.fullName ?? '',
        email: input.email,
        passwordHash,
        isAdmin: input.isAdmin ?? false,
        mustChangePassword: input.mustChangePassword ?? false,
        loginName: input.loginName ?? '',
        sourceId: input.sourceId ?? 0,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning()
      .get()
    deps.db
      .insert(emailAddresses)
      .values({ userId: user.id, email: input.email, lowerEmail: input.email.toLowerCase(), isPrimary: true, isActivated: true })
      .run()
    return user
  })
}

/** Creates an access token; the secret is returned once and only its hash is stored. */
export function createAccessToken(deps: AppDeps, userId: number, name: string) {
  if (!name.trim()) throw unprocessable('Required', 'Name')
  checkMaxSize(name, 255, 'Name')
  const secret = newTokenSecret()
  const now = nowUnix()
  const row = deps.db
    .insert(accessTokens)
    .values({ userId, name, tokenHash: hashToken(secret), tokenLastEight: secret.slice(-8), createdUnix: now, updatedUnix: now })
    .returning()
    .get()
  return { row, secret }
}

/** Number of users (individuals); used to decide whether the first-start admin is needed. */
export function countUsers(deps: AppDeps): number {
  return deps.db.select({ n: sql<number>`count(*)` }).from(users).where(and(eq(users.type, 0))).get()!.n
}
