/** @jsxImportSource warren-jsx */
import { trustedHtml, type Html } from 'warren-jsx/jsx-runtime'
import type { FileChange } from '../git/compare'
import { escapeHtml, escapeText } from '../lib/html'
import type { Diff, DiffRow, FileDiff } from './diff-data'

/**
 * The one diff component (a commit, a comparison, a pull request's files): a summary, the list
 * of changed files (each a link to its diff below), then each file's hunks in a table with the
 * old and new line numbers. Each changed line says `+` or `-` in its text, not by colour alone.
 * What the bounds of diff-data.ts cut is said where it was cut.
 *
 * A pull request's files page adds `notes`: what follows a line (its review comments, the form
 * commenting on it) and the link each line's number carries for a reviewer.
 */

/**
 * A line of a file's diff, as notes name it: `R{n}` the new file's line n (an added or unchanged
 * line), `L{n}` the old file's (a removed line; an unchanged line is also its old number's).
 */
export const rowKeys = (r: DiffRow): string[] => (r.kind === '\\' ? [] : r.kind === '-' ? [`L${r.old}`] : r.kind === '+' ? [`R${r.new}`] : [`R${r.new}`, `L${r.old}`])

/** What a page adds to a diff's lines; `file` is the file's place in the diff (1-based, as its `#diff-{n}` section). */
export interface DiffNotes {
  /** Markup shown under the line `key` of file `file` (a table row's cell spans the row), or null. */
  after(file: number, key: string): Html | null
  /** The link the number of the line `key` carries (null: a plain number). */
  link(file: number, key: string): string | null
}

const STATUS: Record<string, string> = { A: 'added', D: 'deleted', R: 'renamed', C: 'copied', T: 'type changed', M: 'modified' }
const statusOf = (c: FileChange) => STATUS[c.status] ?? 'modified'
const nameOf = (c: FileChange) => (c.previousPath !== undefined && c.previousPath !== c.path ? `${c.previousPath} → ${c.path}` : c.path)

function Counts(props: { change: FileChange }): Html {
  const c = props.change
  return c.binary ? (
    <span class="muted">binary</span>
  ) : (
    <span class="diff-counts">
      <span class="added">+{c.additions}</span> <span class="removed">−{c.deletions}</span>
    </span>
  )
}

/** Class of a diff row by its kind. */
const ROW_CLASS: Record<DiffRow['kind'], string> = { '+': '<tr class=add>', '-': '<tr class=del>', ' ': '<tr>', '\\': '<tr class=note>' }

/**
 * A file's hunks as table rows, written as one string: a diff of a thousand lines is a thousand
 * rows, each its two numbers and its text (`<tr class=add><td><td>12<td>+text`: HTML's implied end
 * tags, no attribute a row does not need); the text escaped here, the notes' markup as given.
 */
function rowsOf(file: FileDiff, index: number, notes: DiffNotes | undefined): string {
  let out = ''
  for (const h of file.hunks) {
    out += `<tr class=hunk><td colspan=2><td>${escapeText(h.header)}`
    for (const r of h.rows) {
      const keys = notes ? rowKeys(r) : []
      const link = keys.length ? notes!.link(index, keys[0]!) : null
      const number = (n: number | null, side: 'L' | 'R') =>
        n === null ? '' : link && keys[0] === `${side}${n}` ? `<a href="${escapeHtml(link)}" aria-label="Comment on ${side === 'R' ? 'line' : 'old line'} ${n}">${n}</a>` : String(n)
      out += `${ROW_CLASS[r.kind]}<td>${number(r.old, 'L')}<td>${number(r.new, 'R')}<td>${escapeText(r.kind === '\\' ? r.text.trim() : r.kind + r.text)}`
      if (r.cut) out += '<span class=muted> … (line cut)</span>'
      for (const key of keys) {
        const after = notes!.after(index, key)
        if (after) out += `<tr class=notes><td colspan=3>${after.value}`
      }
    }
  }
  return out
}

function FileBody(props: { file: FileDiff; index: number; viewUrl: (path: string) => string; notes?: DiffNotes }): Html {
  const { file } = props
  const c = file.change
  if (c.binary) return <p class="notice muted">Binary file, not shown.</p>
  if (file.hunks.length === 0) return <p class="notice muted">{c.status === 'R' || c.status === 'C' ? 'The content is unchanged.' : 'No lines changed (the mode or an empty file).'}</p>
  return (
    <>
      <div class="code" tabindex="0" role="region" aria-label={`Changes of ${c.path}`}>
        <table class="code diff">
          <tbody>{trustedHtml(rowsOf(file, props.index, props.notes))}</tbody>
        </table>
      </div>
      {file.shown === 'cut' ? (
        <p class="notice muted">
          This file's diff is longer than this page shows. <a href={props.viewUrl(c.path)}>View the file</a>
        </p>
      ) : null}
    </>
  )
}

/** A diff: `viewUrl` links a path to its view at the new side (the head commit). */
export function DiffView(props: { diff: Diff; viewUrl: (path: string) => string; rawUrl?: string; notes?: DiffNotes }): Html {
  const { diff } = props
  const files = diff.files
  return (
    <section class="diff-view" aria-label="Changes">
      <p class="diff-summary">
        {diff.more ? `More than ${diff.total}` : diff.total} changed {diff.total === 1 && !diff.more ? 'file' : 'files'} with{' '}
        <span class="added">{diff.additions} additions</span> and <span class="removed">{diff.deletions} deletions</span>
        {props.rawUrl ? (
          <>
            {' · '}
            <a href={props.rawUrl}>Download the diff</a>
          </>
        ) : null}
      </p>
      {diff.cut || diff.more ? (
        <p class="notice muted" role="note">
          {diff.more ? `Only the first ${diff.total} files are listed. ` : ''}
          {diff.cut === 'files'
            ? 'Only the first files are shown with their changes; the others are listed.'
            : diff.cut === 'bytes'
              ? 'This diff is too large to show whole: the files after the cut are listed without their changes.'
              : ''}
        </p>
      ) : null}
      {files.length ? (
        <details class="box diff-files" open={files.length <= 50 ? true : undefined}>
          <summary>Files changed</summary>
          <ul class="entries">
            {files.map((f, i) => (
              <li>
                {f.shown === 'hidden' ? <a href={props.viewUrl(f.change.path)}>{nameOf(f.change)}</a> : <a href={`#diff-${i + 1}`}>{nameOf(f.change)}</a>}{' '}
                <span class="muted">({statusOf(f.change)}{f.shown === 'hidden' ? ', changes not shown' : ''})</span> <Counts change={f.change} />
              </li>
            ))}
          </ul>
        </details>
      ) : (
        <p class="notice muted">No files changed.</p>
      )}
      {files.map((f, i) =>
        f.shown === 'hidden' ? null : (
          <section class="box" id={`diff-${i + 1}`} aria-label={f.change.path}>
            <header>
              <strong class="path">{nameOf(f.change)}</strong>
              <span class="muted">{statusOf(f.change)}</span>
              <Counts change={f.change} />
              {f.change.status !== 'D' ? <a href={props.viewUrl(f.change.path)}>View file</a> : null}
            </header>
            <FileBody file={f} index={i + 1} viewUrl={props.viewUrl} notes={props.notes} />
          </section>
        ),
      )}
    </section>
  )
}
