import type { AppDeps } from '../../deps'
import type { RepoRow } from '../../auth/access'
import { metaObject, type Pointer } from './service'
import { holds } from './store'

/** The largest blob read as a possible LFS pointer (Gitea's blobSizeCutoff). */
export const MAX_POINTER_SIZE = 1024

/** A pointer file's text as git-lfs writes it (Gitea's ReadPointerFromBuffer: version, then oid, then size). */
const POINTER = /^version https:\/\/git-lfs\.github\.com\/spec\/v1\noid sha256:([0-9a-f]{64})\nsize (0|[1-9][0-9]{0,15})\n/

/** The pointer a blob's whole content is, or null. */
export function parsePointer(bytes: Uint8Array): Pointer | null {
  if (bytes.byteLength > MAX_POINTER_SIZE) return null
  const match = POINTER.exec(new TextDecoder().decode(bytes))
  if (!match) return null
  const size = Number(match[2])
  return Number.isSafeInteger(size) ? { oid: match[1]!, size } : null
}

/**
 * The LFS object a blob stands for, when the LFS server is on, the blob is a pointer, the
 * repository has the object and the store holds it (Gitea serves the object then, and the blob
 * itself otherwise).
 */
export async function storedObjectOf(deps: AppDeps, repo: Pick<RepoRow, 'id'>, blob: Uint8Array): Promise<Pointer | null> {
  if (!deps.config.lfsStartServer) return null
  const pointer = parsePointer(blob)
  if (!pointer) return null
  const meta = await metaObject(deps, repo.id, pointer.oid)
  return meta && meta.size === pointer.size && (await holds(deps, pointer.oid, pointer.size)) ? pointer : null
}
