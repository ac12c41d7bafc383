/** @jsxImportSource warren-jsx */
import type { Html } from 'warren-jsx/jsx-runtime'
import type { RepoContext } from '../../auth/repo-context'
import type { DeletedBranch } from '../../modules/branches/changes'
import { MAX_BRANCH_NAME } from '../../modules/branches/model'
import { filesWritable } from '../../modules/contents/write'
import type { WebContext } from '../context'
import { CsrfField } from '../forms'
import { refPath } from '../links'

/*
 * The forms the branches and tags pages (and the code page's branch switcher) give writers, each
 * a `<details>` disclosure that works without JavaScript, posted to Gitea 1.23's addresses:
 * `/branches/_new/{branch|tag|commit}/{name}`, `/branches/delete?name=`, `/tags/delete?id=`,
 * `/settings/rename_branch`, `/branches/restore`. Their routes are in `refs.tsx`; the services decide.
 */

/** A ref's name as path segments, each encoded. */

/** Whether the visitor is offered the forms (a signed-in writer of a repository neither archived nor a mirror); the routes check again. */
export const refsWritable = (ctx: RepoContext) => !!ctx.caller.user && filesWritable(ctx)

/** A branch or tag made from a branch, tag or commit (Gitea's NewBranchForm: `new_branch_name`, `create_tag`, `current_path`). */
export function CreateRefForm(props: { web: WebContext; base: string; kind: 'branch' | 'tag' | 'commit'; from: string; currentPath?: string }): Html {
  const { kind, from } = props
  const shown = kind === 'commit' ? from.slice(0, 10) : from
  return (
    <details class="ref-form">
      <summary>New branch or tag from here</summary>
      <form class="stack" method="post" action={`${props.base}/branches/_new/${kind}/${refPath(from)}`}>
        <CsrfField ctx={props.web} />
        {props.currentPath ? <input type="hidden" name="current_path" value={props.currentPath} /> : null}
        <label>
          Name of the new branch or tag (from {kind} {shown})
          <input name="new_branch_name" required maxlength={String(MAX_BRANCH_NAME)} />
        </label>
        <label class="check">
          <input type="checkbox" name="create_tag" />
          Create a tag instead of a branch
        </label>
        <div>
          <button class="primary" type="submit">
            Create
          </button>
        </div>
      </form>
    </details>
  )
}

/** A branch's rename (Gitea's RenameBranchForm: `from`, `to`). */
function RenameBranchForm(props: { web: WebContext; base: string; branch: string }): Html {
  return (
    <details class="ref-form">
      <summary>Rename</summary>
      <form class="stack" method="post" action={`${props.base}/settings/rename_branch`}>
        <CsrfField ctx={props.web} />
        <input type="hidden" name="from" value={props.branch} />
        <label>
          New name of branch {props.branch}
          <input name="to" required maxlength={String(MAX_BRANCH_NAME)} value={props.branch} />
        </label>
        <div>
          <button class="primary" type="submit">
            Rename branch
          </button>
        </div>
      </form>
    </details>
  )
}

/** A deletion behind its disclosure: opening it and pressing the button is the confirmation. */
function DeleteRefForm(props: { web: WebContext; action: string; what: string; consequence: string }): Html {
  return (
    <details class="ref-form">
      <summary>Delete</summary>
      <form class="stack" method="post" action={props.action}>
        <CsrfField ctx={props.web} />
        <p>{props.consequence}</p>
        <div>
          <button class="danger" type="submit">
            Delete {props.what}
          </button>
        </div>
      </form>
    </details>
  )
}

/** A branch row's forms: a new branch or tag from it, its rename, and its deletion unless it is the default branch. */
export function BranchForms(props: { web: WebContext; base: string; branch: string; isDefault: boolean }): Html {
  const { web, base, branch } = props
  return (
    <div class="ref-forms">
      <CreateRefForm web={web} base={base} kind="branch" from={branch} />
      <RenameBranchForm web={web} base={base} branch={branch} />
      {props.isDefault ? null : (
        <DeleteRefForm
          web={web}
          action={`${base}/branches/delete?name=${encodeURIComponent(branch)}`}
          what={`branch ${branch}`}
          consequence={`Branch ${branch} is deleted; the open pull requests it is the head or base of are closed.`}
        />
      )}
    </div>
  )
}

/** A tag row's forms: a new branch or tag from it, and its deletion. */
export function TagForms(props: { web: WebContext; base: string; tag: string }): Html {
  const { web, base, tag } = props
  return (
    <div class="ref-forms">
      <CreateRefForm web={web} base={base} kind="tag" from={tag} />
      <DeleteRefForm
        web={web}
        action={`${base}/tags/delete?id=${encodeURIComponent(tag)}`}
        what={`tag ${tag}`}
        consequence={`Tag ${tag} is deleted (a tag a release names stays: delete the release first).`}
      />
    </div>
  )
}

/** The offer to restore a branch just deleted, at its last commit (Gitea's `branch_id`, `name`). */
export function RestoreBranchForm(props: { web: WebContext; base: string; deleted: DeletedBranch }): Html {
  const { deleted } = props
  return (
    <form class="box stack restore" method="post" action={`${props.base}/branches/restore`}>
      <CsrfField ctx={props.web} />
      <input type="hidden" name="branch_id" value={String(deleted.id)} />
      <input type="hidden" name="name" value={deleted.name} />
      <p>
        Branch <strong>{deleted.name}</strong> was deleted at <code>{deleted.commit.slice(0, 10)}</code>.
      </p>
      <div>
        <button class="secondary" type="submit">
          Restore branch {deleted.name}
        </button>
      </div>
    </form>
  )
}
