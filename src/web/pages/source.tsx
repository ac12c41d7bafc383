/** @jsxImportSource warren-jsx */
import { trustedHtml, type Html } from 'warren-jsx/jsx-runtime'
import type { ApiRepo } from '../../convert/repo'
import type { TreeEntry } from '../../git/tree'
import { blameUrl, editorUrl, mediaUrl, rawUrl, srcUrl } from '../links'
import type { FileContent, SourceAt } from '../source-data'

const KIND_MARK: Record<TreeEntry['kind'], string> = { dir: '▸', file: ' ', executable: '⚙', symlink: '↪', submodule: '⧉' }
const KIND_LABEL: Record<TreeEntry['kind'], string> = { dir: 'Folder', file: 'File', executable: 'Executable file', symlink: 'Symbolic link', submodule: 'Submodule' }

/**
 * A folder's entries, each a link to its own view; on a branch, for those who may write files
 * (`writable`: modules/contents' filesWritable), the editor's New file and Upload files.
 */
export function FolderList(props: { repo: ApiRepo; at: SourceAt; entries: TreeEntry[]; total: number; writable?: boolean }): Html {
  const { repo, at } = props
  const owner = repo.owner.login
  return (
    <div class="box">
      {props.writable && at.kind === 'branch' ? (
        <header>
          <a href={editorUrl(owner, repo.name, '_new', at.ref, at.path)}>New file</a>
          <a href={editorUrl(owner, repo.name, '_upload', at.ref, at.path)}>Upload files</a>
        </header>
      ) : null}
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

/** A byte count as people read it (B, KiB, MiB). */
export const sizeText = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`)

/**
 * A file's lines (HTML fragments, highlighted or escaped: web/highlight.ts) as an ordered list,
 * each item the `#L{n}` target of its line, numbered by the stylesheet (a list without it): the
 * bytes of a long file are its text and its colours, not 2,000 copies of the same row markup. The
 * items are written as HTML lets them be (`<li id=L12>`, the end tag implied): the same elements
 * as the longer spelling. With the script, a number is a link (one `<a href="#L12">` the script
 * moves to the row under the mouse or the keyboard: one tab stop, the arrow keys go from line to
 * line) and a click or Enter marks the line (`#L12`, with Shift a range `#L3-L7`: web/script.ts);
 * without it, an address with `#L12` still marks its line.
 */
export function NumberedLines(props: { lines: string[]; label: string }): Html {
  const { lines } = props
  let items = ''
  for (let i = 0; i < lines.length; i++) items += `<li id=L${i + 1}>${lines[i]}`
  return (
    <div class="code" tabindex="0" role="region" aria-label={props.label}>
      <ol class={`lines w${String(lines.length).length}`}>{trustedHtml(items)}</ol>
    </div>
  )
}

/**
 * A file: its numbered lines. Binary and too-large files, and files with too long a line, link to
 * the raw download instead. On a branch, for those who may write files (`writable`), the
 * editor's Edit (text files) and Delete.
 */
export function FileView(props: { repo: ApiRepo; at: SourceAt; file: FileContent; lines: string[] | null; writable?: boolean }): Html {
  const { repo, at, file } = props
  const lfs = 'lfs' in file && file.lfs === true
  const raw = (lfs ? mediaUrl : rawUrl)(repo.owner.login, repo.name, at.kind, at.ref, at.path)
  const name = at.path[at.path.length - 1] ?? ''
  const editing = props.writable && at.kind === 'branch' && file.kind !== 'other'
  const header = (
    <header>
      <strong>{name}</strong>
      {'size' in file ? <span class="muted">{sizeText(file.size)}</span> : null}
      {lfs ? <span class="muted">Stored with Git LFS</span> : null}
      <a href={raw}>Raw</a>
      {file.kind === 'text' || file.kind === 'long-lines' ? <a href={blameUrl(repo.owner.login, repo.name, at.kind, at.ref, at.path)}>Blame</a> : null}
      {editing && !lfs && (file.kind === 'text' || file.kind === 'long-lines') ? <a href={editorUrl(repo.owner.login, repo.name, '_edit', at.ref, at.path)}>Edit</a> : null}
      {editing ? <a href={editorUrl(repo.owner.login, repo.name, '_delete', at.ref, at.path)}>Delete</a> : null}
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
  return (
    <div class="box">
      {header}
      <NumberedLines lines={props.lines ?? []} label={`Content of ${name}`} />
    </div>
  )
}
