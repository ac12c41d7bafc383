import type { Html } from 'warren-jsx/jsx-runtime'
import type { FileChange } from '../git/compare'
import type { Diff, FileDiff } from './diff-data'

/**
 * The one diff component (a commit, a comparison, a pull request's files): a summary, the list
 * of changed files (each a link to its diff below), then each file's hunks in a table with the
 * old and new line numbers. Each changed line says `+` or `-` in its text, not by colour alone.
 * What the bounds of diff-data.ts cut is said where it was cut.
 */

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

function FileBody(props: { file: FileDiff; viewUrl: (path: string) => string }): Html {
  const { file } = props
  const c = file.change
  if (c.binary) return <p class="notice muted">Binary file, not shown.</p>
  if (file.hunks.length === 0) return <p class="notice muted">{c.status === 'R' || c.status === 'C' ? 'The content is unchanged.' : 'No lines changed (the mode or an empty file).'}</p>
  return (
    <>
      <div class="code" tabindex="0" role="region" aria-label={`Changes of ${c.path}`}>
        <table class="code diff">
          <tbody>
            {file.hunks.map((h) => (
              <>
                <tr class="hunk">
                  <td class="num" aria-hidden="true"></td>
                  <td class="num" aria-hidden="true"></td>
                  <td>{h.header}</td>
                </tr>
                {h.rows.map((r) => (
                  <tr class={r.kind === '+' ? 'add' : r.kind === '-' ? 'del' : r.kind === '\\' ? 'note' : undefined}>
                    <td class="num">{r.old ?? ''}</td>
                    <td class="num">{r.new ?? ''}</td>
                    <td>
                      {r.kind === '\\' ? r.text.trim() : r.kind + r.text}
                      {r.cut ? <span class="muted"> … (line cut)</span> : null}
                    </td>
                  </tr>
                ))}
              </>
            ))}
          </tbody>
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
export function DiffView(props: { diff: Diff; viewUrl: (path: string) => string; rawUrl?: string }): Html {
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
            <FileBody file={f} viewUrl={props.viewUrl} />
          </section>
        ),
      )}
    </section>
  )
}
