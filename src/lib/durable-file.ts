import { open, rename, rm } from 'node:fs/promises'
import { dirname } from 'node:path'

/** Syncs a folder's entries to disk (a rename into it survives a power loss once this answers). */
export async function syncFolder(path: string): Promise<void> {
  const handle = await open(path, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** A file being written under a temporary name: bytes in order, then `keep` (synced and renamed into place) or `discard`. */
export interface DurableFileWriter {
  write(chunk: Uint8Array): Promise<void>
  keep(): Promise<void>
  discard(): Promise<void>
}

/**
 * Starts writing `final` as `temp` (made new: an existing temp file is an error), so that `final`
 * only ever appears whole: `keep` syncs the bytes to disk, renames the file into place and syncs its folder. A
 * crash leaves at most the temporary file, which the owner's repair removes.
 */
export async function createDurableFile(final: string, temp = final + '.part'): Promise<DurableFileWriter> {
  const handle = await open(temp, 'wx')
  let closed = false
  const close = async () => {
    if (!closed) {
      closed = true
      await handle.close()
    }
  }
  return {
    async write(chunk) {
      let done = 0
      while (done < chunk.byteLength) done += (await handle.write(chunk, done, chunk.byteLength - done)).bytesWritten
    },
    async keep() {
      try {
        await handle.sync()
        await close()
        await rename(temp, final)
        await syncFolder(dirname(final))
      } catch (e) {
        await close().catch(() => {})
        await rm(temp, { force: true })
        throw e
      }
    },
    async discard() {
      await close().catch(() => {})
      await rm(temp, { force: true })
    },
  }
}
