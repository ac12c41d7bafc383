import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './users'
import { repositories } from './repos'

/**
 * The package registry (Gitea's `package`, `package_version`, `package_file`; the blob's hashes
 * are kept on the file row). A package belongs to a user or organisation and goes with it
 * (cascade); its versions and their files go with it. The bytes live by content in
 * {data}/packages/blobs/{sha256[0:2]}/{sha256[2:4]}/{sha256} (src/modules/packages/blobs.ts),
 * shared by every file of the same content, removed once no file row names them.
 */
export const packages = sqliteTable(
  'packages',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    ownerId: integer('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The registry's type: `generic`. */
    type: text('type').notNull(),
    name: text('name').notNull(),
    lowerName: text('lower_name').notNull(),
    /**
     * The repository of its owner it is linked to (Gitea's repo_id; the package settings' link),
     * or null; unlinked when the repository is deleted (the reference) or transferred.
     */
    repoId: integer('repo_id').references(() => repositories.id, { onDelete: 'set null' }),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('packages_owner_type_name_uq').on(t.ownerId, t.type, t.lowerName), index('packages_repo_idx').on(t.repoId)],
)
export type PackageRow = typeof packages.$inferSelect

export const packageVersions = sqliteTable(
  'package_versions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    packageId: integer('package_id')
      .notNull()
      .references(() => packages.id, { onDelete: 'cascade' }),
    /** The owner of its package, kept here for the owner's list (newest first). */
    ownerId: integer('owner_id').notNull(),
    /** Who published it; no foreign key: a deleted account's versions stay, shown as the Ghost. */
    creatorId: integer('creator_id').notNull(),
    version: text('version').notNull(),
    lowerVersion: text('lower_version').notNull(),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [
    uniqueIndex('package_versions_package_version_uq').on(t.packageId, t.lowerVersion),
    index('package_versions_owner_created_idx').on(t.ownerId, t.createdUnix, t.id),
    /** A package's versions newest first: its latest, its versions list. */
    index('package_versions_package_created_idx').on(t.packageId, t.createdUnix, t.id),
  ],
)
export type PackageVersionRow = typeof packageVersions.$inferSelect

export const packageFiles = sqliteTable(
  'package_files',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    versionId: integer('version_id')
      .notNull()
      .references(() => packageVersions.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    lowerName: text('lower_name').notNull(),
    size: integer('size').notNull(),
    md5: text('md5').notNull(),
    sha1: text('sha1').notNull(),
    sha256: text('sha256').notNull(),
    sha512: text('sha512').notNull(),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('package_files_version_name_uq').on(t.versionId, t.lowerName), index('package_files_sha256_idx').on(t.sha256)],
)
export type PackageFileRow = typeof packageFiles.$inferSelect
