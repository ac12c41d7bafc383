import { trustedHtml, type Html } from 'warren-jsx/jsx-runtime'
import type { ApiRepo } from '../../convert/repo'
import type { TreeEntry } from '../../git/tree'
import { rawUrl, srcUrl } from '../links'
import type { FileContent, SourceAt } from '../source-data'

const KIND_MARK: Record<TreeEntry['kind'], string> = { dir: '▸', file: ' ', executable: '⚙', symlink: '↪', submodule: '⧉' }
const KIND_LABEL: Record<TreeEntry['kind'], string> = { dir: 'Folder', file: 'File', executable: 'Executable file', symlink: 'Symbolic link', submodule: 'Submodule' }

/** A folder's entries, each a link to its own view. */
export function FolderList(props: { repo: ApiRepo; at: SourceAt; entries: TreeEntry[]; total: number }): Html {
  const { repo, at } = props
  const owner = repo.owner.login
  return (
    <div class="box">
      <ul class="entries" aria-label="Files">
        {at.path.length ? (
          <li>
            <a href={srcUrl(owner, repo.name, at.kind, at.ref, at.path.slice(0, -1))}>..</a>
          </li>
        ) : null}
        {props.entries.map((e) => (
          <li>
            <span class="kind" title={KIND_LABEL[e.kind]} aria-hidden="true">
              {KIND_MARK[e.kind]}
            </span>
            <span class="sr-only">{KIND_LABEL[e.kind]}: </span>
            {e.kind === 'submodule' ? <span>{e.path}</span> : <a href={srcUrl(owner, repo.name, at.kind, at.ref, [...at.path, e.path])}>{e.path}</a>}
          </li>
        ))}
        {props.entries.length === 0 ? <li class="muted">This folder is empty.</li> : null}
      </ul>
      {props.total > props.entries.length ? <p class="notice muted">{props.total - props.entries.length} more entries not shown.</p> : null}
    </div>
  )
}

const sizeText = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`)

/**
 * A file: its lines (HTML fragments, highlighted or escaped: web/highlight.ts) numbered, each
 * number the `#L{n}` anchor of its row (`#L3-L7` marks a range: LINES_SCRIPT). Binary and
 * too-large files, and files with too long a line, link to the raw download instead.
 */
export function FileView(props: { repo: ApiRepo; at: SourceAt; file: FileContent; lines: string[] | null }): Html {
  const { repo, at, file } = props
  const raw = rawUrl(repo.owner.login, repo.name, at.kind, at.ref, at.path)
  const name = at.path[at.path.length - 1] ?? ''
  const header = (
    <header>
      <strong>{name}</strong>
      {'size' in file ? <span class="muted">{sizeText(file.size)}</span> : null}
      <a href={raw}>Raw</a>
    </header>
  )
  if (file.kind !== 'text') {
    const why =
      file.kind === 'too-large'
        ? 'This file is too large to show here.'
        : file.kind === 'long-lines'
          ? 'This file has lines too long to show here.'
        : file.kind === 'binary'
          ? 'This is a binary file.'
          : file.kind === 'other' && file.entry.kind === 'symlink'
            ? 'This is a symbolic link.'
            : 'This is a submodule.'
    return (
      <div class="box">
        {header}
        <p class="notice">
          {why} {file.kind === 'other' && file.entry.kind === 'submodule' ? null : <a href={raw}>Download the raw file</a>}
        </p>
      </div>
    )
  }
  const lines = props.lines ?? []
  return (
    <div class="box">
      {header}
      <div class="code">
        <table class="code lines">
          <tbody>
            {lines.map((line, i) => (
              <tr id={`L${i + 1}`}>
                <td class="num">
                  <a href={`#L${i + 1}`}>{i + 1}</a>
                </td>
                <td>{trustedHtml(line)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  )
}
