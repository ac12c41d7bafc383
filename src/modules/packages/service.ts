import { and, asc, count, desc, eq, sql, type SQL } from 'drizzle-orm'
import { alias } from 'drizzle-orm/sqlite-core'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { writeTransaction } from '../../db/client'
import { recordEvent } from '../../events/outbox'
import { packageFiles, packages, packageVersions, repositories, users, type PackageFileRow, type PackageRow, type PackageVersionRow } from '../../db/schema'
import { containsText, inJsonList } from '../../db/sql'
import { ApiError, badRequest, conflict, notFound } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { digestCheck, digestedStream } from '../../lib/body'
import { findReadableRepo } from '../repos/queries'
import { existsSync } from 'node:fs'
import { disposition } from '../files/service'
import { blobPath, discardBlob, placeBlob, receiveBlob, removeBlobIfUnnamed, removeUnnamedBlobs, withBlob } from './blobs'

/*
 * The package registry's records and the generic registry's rules (Gitea 1.23's
 * routers/api/packages/generic and services/packages): a package is named within its owner and
 * type, a version within its package, a file within its version (each case-insensitively); the
 * last file of a version taken away takes the version, the last version the package.
 */

/** A version with its package: one item of the owner's list, one Package record. */
export interface PackageVersion {
  pkg: PackageRow
  version: PackageVersionRow
}

/** The longest package name, version and file name (Gitea stores them in VARCHAR(255)). */
export const MAX_PACKAGE_TEXT = 255

const PACKAGE_NAME = /^[-_+.A-Za-z0-9]+$/
const FILE_NAME = /^[-_+=:;.()[\]{}~!@#$%^& A-Za-z0-9]+$/

/**
 * A generic package's name, version and file name, as Gitea checks them: the name of letters,
 * digits and `-_+.` (one character: a letter or digit; not `..`), the version without spaces
 * around it, the file name of letters, digits, spaces and `-_+=:;.()[]{}~!@#$%^&`, without spaces
 * around it, not `.` or `..`; each at most MAX_PACKAGE_TEXT characters. 400 otherwise.
 */
export function checkGenericNames(name: string, version: string, filename: string): void {
  const validName = name.length <= MAX_PACKAGE_TEXT && PACKAGE_NAME.test(name) && name !== '..' && (name.length > 1 || /[A-Za-z0-9]/.test(name))
  if (!validName) throw badRequest('invalid package name')
  if (filename.length > MAX_PACKAGE_TEXT || !FILE_NAME.test(filename) || filename.trim() !== filename || filename === '.' || filename === '..')
    throw badRequest('invalid filename')
  if (version === '' || version.length > MAX_PACKAGE_TEXT || version.trim() !== version || !version.isWellFormed() || /[\x00-\x1f\x7f]/.test(version))
    throw badRequest('invalid package version')
}

const versionWhere = (ownerId: number, type: string, name: string, version: string): SQL =>
  and(eq(packages.ownerId, ownerId), eq(packages.type, type), eq(packages.lowerName, name.toLowerCase()), eq(packageVersions.lowerVersion, version.toLowerCase()))!

/** The version `version` of the package `type`/`name` of the owner, or 404 (Gitea's "package does not exist"). */
export async function getPackageVersion(deps: AppDeps, ownerId: number, type: string, name: string, version: string): Promise<PackageVersion> {
  const [row] = await deps.db
    .select({ pkg: packages, version: packageVersions })
    .from(packageVersions)
    .innerJoin(packages, eq(packages.id, packageVersions.packageId))
    .where(versionWhere(ownerId, type, name, version))
  if (!row) throw notFound('package does not exist')
  return row
}

/** A page of versions with their packages, newest first, of those `where` names. */
async function pageOfVersions(deps: AppDeps, where: SQL | undefined, page: Page): Promise<Paged<PackageVersion>> {
  const total = (await deps.db.select({ n: count() }).from(packageVersions).innerJoin(packages, eq(packages.id, packageVersions.packageId)).where(where))[0]!.n
  const rows = await deps.db
    .select({ pkg: packages, version: packageVersions })
    .from(packageVersions)
    .innerJoin(packages, eq(packages.id, packageVersions.packageId))
    .where(where)
    .orderBy(desc(packageVersions.createdUnix), desc(packageVersions.id))
    .limit(page.limit)
    .offset(page.offset)
  return { rows, total }
}

/** The filters of the package lists: one type, `q` in the name. */
const packageFilter = (filter: { type?: string; q?: string }) =>
  [filter.type ? eq(packages.type, filter.type) : undefined, filter.q ? containsText(packages.lowerName, filter.q.toLowerCase()) : undefined] as const

/** The owner's package versions, newest first, of one type and with `q` in the name when asked. */
export async function listPackageVersions(deps: AppDeps, ownerId: number, filter: { type?: string; q?: string }, page: Page): Promise<Paged<PackageVersion>> {
  return await pageOfVersions(deps, and(eq(packageVersions.ownerId, ownerId), ...packageFilter(filter)), page)
}

/** Every owner's package versions, newest first, of one type and with `q` in the name when asked (the site administration's list), with the owners' names. */
export async function listAllPackageVersions(deps: AppDeps, filter: { type?: string; q?: string }, page: Page): Promise<Paged<PackageVersion & { ownerName: string }>> {
  const found = await pageOfVersions(deps, and(...packageFilter(filter)), page)
  const ids = [...new Set(found.rows.map((r) => r.version.ownerId))]
  const names = new Map(ids.length ? (await deps.db.select({ id: users.id, name: users.name }).from(users).where(inJsonList(users.id, ids))).map((u) => [u.id, u.name]) : [])
  return { rows: found.rows.map((r) => ({ ...r, ownerName: names.get(r.version.ownerId) ?? '' })), total: found.total }
}

/** Deletes the package version of id `versionId`, whoever owns it (the site administration's list): 404 when there is none. */
export async function deletePackageVersionById(deps: AppDeps, actor: UserRow, versionId: number): Promise<void> {
  const hashes = await writeTransaction(deps.db, async () => {
    const [found] = await deps.db
      .select({ pkg: packages, version: packageVersions })
      .from(packageVersions)
      .innerJoin(packages, eq(packages.id, packageVersions.packageId))
      .where(eq(packageVersions.id, versionId))
    if (!found) throw notFound('package does not exist')
    return await dropVersion(deps, actor, found)
  })
  await removeUnnamedBlobs(deps, hashes)
}

const newer = alias(packageVersions, 'pkg_newer')
/** A version no other version of its package is newer than (Gitea's SearchLatestVersions): one search of the package's versions by time. */
const isLatestVersion = sql`NOT EXISTS (SELECT 1 FROM ${packageVersions} AS ${sql.identifier('pkg_newer')} WHERE ${newer.packageId} = ${packageVersions.packageId} AND (${newer.createdUnix} > ${packageVersions.createdUnix} OR (${newer.createdUnix} = ${packageVersions.createdUnix} AND ${newer.id} > ${packageVersions.id})))`

/**
 * Packages with their latest version, newest first (the web's package lists, Gitea's
 * SearchLatestVersions): an owner's, or those linked to a repository; of one type and with `q` in
 * the name when asked.
 */
export async function listLatestPackages(
  deps: AppDeps,
  of: { ownerId: number } | { repoId: number },
  filter: { type?: string; q?: string },
  page: Page,
): Promise<Paged<PackageVersion>> {
  const scope = 'ownerId' in of ? eq(packageVersions.ownerId, of.ownerId) : eq(packages.repoId, of.repoId)
  return await pageOfVersions(deps, and(scope, isLatestVersion, ...packageFilter(filter)), page)
}

/** The package `type`/`name` of the owner, or 404. */
export async function getPackage(deps: AppDeps, ownerId: number, type: string, name: string): Promise<PackageRow> {
  const [row] = await deps.db
    .select()
    .from(packages)
    .where(and(eq(packages.ownerId, ownerId), eq(packages.type, type), eq(packages.lowerName, name.toLowerCase())))
  if (!row) throw notFound('package does not exist')
  return row
}

/** A package's versions, newest first, with `q` in the version when asked (Gitea's SearchVersions). */
export async function listVersionsOf(deps: AppDeps, packageId: number, q: string | undefined, page: Page): Promise<Paged<PackageVersionRow>> {
  const where = and(eq(packageVersions.packageId, packageId), q ? containsText(packageVersions.lowerVersion, q.toLowerCase()) : undefined)
  const total = (await deps.db.select({ n: count() }).from(packageVersions).where(where))[0]!.n
  const rows = await deps.db
    .select()
    .from(packageVersions)
    .where(where)
    .orderBy(desc(packageVersions.createdUnix), desc(packageVersions.id))
    .limit(page.limit)
    .offset(page.offset)
  return { rows, total }
}

/** The file `fileId` of a version (the web's download), or 404. */
export async function getVersionFileById(deps: AppDeps, versionId: number, fileId: number): Promise<PackageFileRow> {
  const [file] = Number.isSafeInteger(fileId)
    ? await deps.db
        .select()
        .from(packageFiles)
        .where(and(eq(packageFiles.versionId, versionId), eq(packageFiles.id, fileId)))
    : []
  if (!file) throw notFound('package file does not exist')
  return file
}

/**
 * Links a package to a repository of its owner, or unlinks it (`repoId` null) (Gitea's
 * SetRepositoryLink, the package settings' `link` and `unlink`): the repository must be one of the
 * owner's that `actor` may read (the visibility rule), else 404. Announces nothing, as in Gitea.
 */
export async function setPackageRepository(deps: AppDeps, actor: UserRow, pkg: PackageRow, repoId: number | null): Promise<void> {
  try {
    await writeTransaction(deps.db, async () => {
      if (repoId !== null) {
        const repo = Number.isSafeInteger(repoId) && repoId > 0 ? await findReadableRepo(deps, actor, and(eq(repositories.id, repoId), eq(repositories.ownerId, pkg.ownerId))!) : undefined
        if (!repo) throw notFound(`repository does not exist [id: ${repoId}]`)
      }
      const changed = await deps.db.update(packages).set({ repoId }).where(eq(packages.id, pkg.id)).returning({ id: packages.id })
      if (changed.length === 0) throw notFound('package does not exist')
    })
  } catch (e) {
    // The repository deleted meanwhile (its reference refuses the link).
    if (!(e instanceof ApiError) && /foreign key/i.test(String((e as Error)?.message))) throw notFound(`repository does not exist [id: ${repoId}]`)
    throw e
  }
}

/** The files of a version, in the order they were added. */
export async function listVersionFiles(deps: AppDeps, versionId: number): Promise<PackageFileRow[]> {
  return await deps.db.select().from(packageFiles).where(eq(packageFiles.versionId, versionId)).orderBy(asc(packageFiles.id))
}

/** The file `filename` of a version, or 404. */
async function getVersionFile(deps: AppDeps, versionId: number, filename: string): Promise<PackageFileRow> {
  const [file] = await deps.db
    .select()
    .from(packageFiles)
    .where(and(eq(packageFiles.versionId, versionId), eq(packageFiles.lowerName, filename.toLowerCase())))
  if (!file) throw notFound('package file does not exist')
  return file
}

/** A package file's bytes, streamed from its blob as an attachment (the registry's download and the web's). */
export function packageFileResponse(deps: AppDeps, file: PackageFileRow): Response {
  const path = blobPath(deps, file.sha256)
  // Only outside damage takes a named blob away.
  if (!existsSync(path)) throw notFound('the package file is missing')
  return new Response(Bun.file(path), {
    headers: {
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(file.size),
      'Content-Disposition': disposition('attachment', file.name),
      'X-Content-Type-Options': 'nosniff',
    },
  })
}

/**
 * The outbox's event of a version published or deleted (Gitea's `package` webhook), inside the
 * change's write transaction: an owner's event (no repository), keeping the rows the Package
 * record is made from (a deleted version's are gone when the event is read).
 */
async function recordPackageEvent(deps: AppDeps, kind: 'package.created' | 'package.deleted', actor: UserRow, found: PackageVersion): Promise<void> {
  await recordEvent(deps.db, { kind, repoId: null, actorId: actor.id, payload: { pkg: found.pkg, version: found.version } })
}

/** Deletes a version with its files, and its package when no version is left, announcing it; inside a write transaction. Answers the hashes of the files gone. */
async function dropVersion(deps: AppDeps, actor: UserRow, found: PackageVersion): Promise<string[]> {
  const hashes = (await deps.db.select({ sha256: packageFiles.sha256 }).from(packageFiles).where(eq(packageFiles.versionId, found.version.id))).map((r) => r.sha256)
  await deps.db.delete(packageVersions).where(eq(packageVersions.id, found.version.id))
  const [left] = await deps.db.select({ id: packageVersions.id }).from(packageVersions).where(eq(packageVersions.packageId, found.pkg.id)).limit(1)
  if (!left) await deps.db.delete(packages).where(eq(packages.id, found.pkg.id))
  await recordPackageEvent(deps, 'package.deleted', actor, found)
  return hashes
}

/** Deletes a version of a package (the API's deletePackage, the generic registry's version DELETE): 404 when there is none. */
export async function deletePackageVersion(deps: AppDeps, actor: UserRow, ownerId: number, type: string, name: string, version: string): Promise<void> {
  const hashes = await writeTransaction(deps.db, async () => await dropVersion(deps, actor, await getPackageVersion(deps, ownerId, type, name, version)))
  await removeUnnamedBlobs(deps, hashes)
}

/** Deletes one file of a generic package's version; the version goes with its last file. 404 when either is missing. */
export async function deleteGenericFile(deps: AppDeps, actor: UserRow, ownerId: number, name: string, version: string, filename: string): Promise<void> {
  const hashes = await writeTransaction(deps.db, async () => {
    const found = await getPackageVersion(deps, ownerId, 'generic', name, version)
    const file = await getVersionFile(deps, found.version.id, filename)
    const [files] = await deps.db.select({ n: count() }).from(packageFiles).where(eq(packageFiles.versionId, found.version.id))
    if (files!.n <= 1) return await dropVersion(deps, actor, found)
    await deps.db.delete(packageFiles).where(eq(packageFiles.id, file.id))
    return [file.sha256]
  })
  await removeUnnamedBlobs(deps, hashes)
}

/** The file of a generic package's version, for its download: 404 when missing. */
export async function findGenericFile(deps: AppDeps, ownerId: number, name: string, version: string, filename: string): Promise<PackageFileRow> {
  const found = await getPackageVersion(deps, ownerId, 'generic', name, version)
  return await getVersionFile(deps, found.version.id, filename)
}

/**
 * Publishes a file of a generic package (Gitea's UploadPackage): names checked (400), the body
 * streamed to disk and hashed (413 past WARREN_MAX_PACKAGE_FILE_SIZE; a `Digest` checked as it
 * streams), then, in the blob's turn, the blob moved into place and the rows written: the package
 * and the version made when new (a new version announced: `package.created`), the file added, 409
 * when the version already has a file of that name. Nothing is kept (nor announced) when it fails.
 */
export async function uploadGenericFile(deps: AppDeps, owner: UserRow, creator: UserRow, name: string, version: string, filename: string, request: Request): Promise<void> {
  checkGenericNames(name, version, filename)
  const limit = deps.config.maxPackageFileSize
  if (Number(request.headers.get('content-length') ?? 0) > limit) throw new ApiError(413, `The package file is larger than ${limit} bytes`)
  // Refused before its bytes are read when the file is there already (checked again as it is written).
  const existing = await getPackageVersion(deps, owner.id, 'generic', name, version).catch(() => null)
  if (existing && (await getVersionFile(deps, existing.version.id, filename).catch(() => null))) throw conflict('package file already exists')
  const digest = digestCheck(request)
  const body = digest && request.body ? digestedStream(request.body, digest) : request.body
  const blob = await receiveBlob(deps, body, limit)
  try {
    digest?.verify()
  } catch (e) {
    discardBlob(blob)
    throw e
  }
  // Whatever fails before the blob is placed (the turn's lock too) leaves no temporary file behind.
  await withBlob(deps, blob.sha256, async () => {
    try {
      await placeBlob(deps, blob)
    } catch (e) {
      discardBlob(blob)
      throw e
    }
    try {
      await writeTransaction(deps.db, async () => {
        const now = nowUnix()
        const lowerName = name.toLowerCase()
        await deps.db.insert(packages).values({ ownerId: owner.id, type: 'generic', name, lowerName, createdUnix: now }).onConflictDoNothing()
        const [pkg] = await deps.db
          .select()
          .from(packages)
          .where(and(eq(packages.ownerId, owner.id), eq(packages.type, 'generic'), eq(packages.lowerName, lowerName)))
        const lowerVersion = version.toLowerCase()
        const made = await deps.db
          .insert(packageVersions)
          .values({ packageId: pkg!.id, ownerId: owner.id, creatorId: creator.id, version, lowerVersion, createdUnix: now })
          .onConflictDoNothing()
          .returning()
        const row =
          made[0] ??
          (await deps.db
            .select()
            .from(packageVersions)
            .where(and(eq(packageVersions.packageId, pkg!.id), eq(packageVersions.lowerVersion, lowerVersion))))[0]!
        const added = await deps.db
          .insert(packageFiles)
          .values({
            versionId: row.id,
            name: filename,
            lowerName: filename.toLowerCase(),
            size: blob.size,
            md5: blob.md5,
            sha1: blob.sha1,
            sha256: blob.sha256,
            sha512: blob.sha512,
            createdUnix: now,
          })
          .onConflictDoNothing()
          .returning({ id: packageFiles.id })
        if (added.length === 0) throw conflict('package file already exists')
        // The first file of a new version publishes it (Gitea's PackageCreate); a later file announces nothing.
        if (made[0]) await recordPackageEvent(deps, 'package.created', creator, { pkg: pkg!, version: made[0] })
      })
    } catch (e) {
      await removeBlobIfUnnamed(deps, blob.sha256)
      // The owner deleted while the file arrived.
      if (!(e instanceof ApiError) && /foreign key/i.test(String((e as Error)?.message))) throw notFound(`user does not exist [name: ${owner.name}]`)
      throw e
    }
  }).catch((e) => {
    discardBlob(blob) // nothing when it was placed
    throw e
  })
}

/**
 * The blobs of an owner's package files, read inside the transaction deleting the owner (whose
 * packages go with it: the schema's cascade); `removeFiles` removes those no row names any more,
 * once it committed. A crash in between leaves blobs no row names, which the sweep removes.
 */
export async function ownerPackageBlobs(deps: AppDeps, ownerId: number) {
  const rows = await deps.db
    .selectDistinct({ sha256: packageFiles.sha256 })
    .from(packageFiles)
    .innerJoin(packageVersions, eq(packageVersions.id, packageFiles.versionId))
    .where(eq(packageVersions.ownerId, ownerId))
  return { removeFiles: () => removeUnnamedBlobs(deps, rows.map((r) => r.sha256)) }
}
