import { and, asc, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import type { Config } from '../config'
import { gpgKeys, type GpgKeyRow, type PublicKeyRow } from '../db/schema'
import type { UserRow } from '../auth/caller'
import { isoTime, ZERO_TIME } from '../lib/time'
import { apiUrl } from '../lib/urls'
import { toApiUser } from './user'

/** The PublicKey record (records.md §3). */
export function toApiPublicKey(config: Config, key: PublicKeyRow, owner: UserRow | null, viewer: UserRow | null) {
  return {
    id: key.id,
    key: key.content,
    url: apiUrl(config, `user/keys/${key.id}`),
    ...(key.name ? { title: key.name } : {}),
    ...(key.fingerprint ? { fingerprint: key.fingerprint } : {}),
    created_at: isoTime(key.createdUnix),
    key_type: 'user',
    ...(owner ? { user: toApiUser(config, owner, viewer) } : {}),
  }
}

/** An identity of a GPG key, as the GPGKey record lists it. */
export type EmailEntry = { email: string; verified: boolean }

/** The GPGKey record (records.md §4); `subkeys` are the rows whose primary_key_id is this key's id. */
function toApiGpgKey(key: GpgKeyRow, subkeys: GpgKeyRow[]) {
  const fields = (row: GpgKeyRow) => ({
    id: row.id,
    primary_key_id: row.primaryKeyId,
    key_id: row.keyId,
    public_key: row.content,
    can_sign: row.canSign,
    can_encrypt_comms: row.canEncryptComms,
    can_encrypt_storage: row.canEncryptStorage,
    can_certify: row.canCertify,
    created_at: isoTime(row.createdUnix),
    expires_at: row.expiredUnix > 0 ? isoTime(row.expiredUnix) : ZERO_TIME,
    verified: row.verified,
  })
  return {
    ...fields(key),
    emails: key.primaryKeyId ? [] : (JSON.parse(key.emails) as EmailEntry[]),
    subkeys: subkeys.map((s) => ({ ...fields(s), emails: [] as EmailEntry[], subkeys: [] as unknown[] })),
  }
}

/** GPG key records of `rows` with their subkeys, fetched in one query. */
export async function gpgKeysToApi(deps: AppDeps, ownerId: number, rows: GpgKeyRow[]) {
  const primaryIds = rows.filter((r) => !r.primaryKeyId).map((r) => r.keyId)
  const subs = primaryIds.length
    ? await deps.db
        .select()
        .from(gpgKeys)
        .where(and(eq(gpgKeys.ownerId, ownerId), inArray(gpgKeys.primaryKeyId, primaryIds)))
        .orderBy(asc(gpgKeys.id))
    : []
  return rows.map((row) => toApiGpgKey(row, row.primaryKeyId ? [] : subs.filter((s) => s.primaryKeyId === row.keyId)))
}
