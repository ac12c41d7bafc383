/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { TypeCheck } from '@sinclair/typebox/compiler'
import { compiledAtFirstUse } from '../../lib/checked-json'
import type { AppDeps } from '../../deps'
import type { RepoContext } from '../../auth/repo-context'
import { branchProtectionsToApi, tagProtectionsToApi } from '../../convert/protection'
import { ApiError, unprocessable } from '../../lib/errors'
import { pathNumber } from '../../lib/path-number'
import { EditBranchProtectionOption, EditTagProtectionOption, UpdateBranchProtectionPriories, type EditBranchProtectionInput, type TagProtectionInput } from '../../modules/protections/model'
import {
  createBranchRule,
  createTagRule,
  deleteBranchRule,
  deleteTagRule,
  editBranchRule,
  editTagRule,
  getTagRule,
  listBranchRules,
  listTagRules,
  setBranchRulePriorities,
} from '../../modules/protections/service'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { pageDetail, webContext, type WebContext } from '../context'
import { ButtonForm, CsrfField, CsrfText, FormCheck, FormText, formRoute, type FormRequest, ListTable, seeOther, SubmitRow, ticked } from '../forms'
import { admin, base, settingsPage } from './settings-repo'

/*
 * A repository's branch and tag protection rules in the browser (Gitea 1.23's
 * `/{owner}/{repo}/settings/branches`, `/settings/branches/edit?rule_name=`, `/settings/branches/{id}/delete`,
 * `/settings/tags`, `/settings/tags/{id}`, `/settings/tags/delete`): repository administrators, as
 * the API's /branch_protections and /tag_protections, through the same service. A form's lists of
 * people are names separated by commas or spaces; once read they are checked against the API's
 * own option schema, so the page takes what the API takes and nothing more.
 */

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
const RuleParams = t.Object({ ...RepoParams.properties, id: t.String({ maxLength: 20 }) })

/** A list of names typed in one field: at most the API's 100 names of 255 characters, with their separators. */
const NamesText = FormText(100 * 257)
const PatternsText = FormText(4096)

const PUSH_MODES = [
  ['none', 'Disable push'],
  ['all', 'Enable push: anyone with write access may push (not force-push)'],
  ['whitelist', 'Allowlisted push: only the users and teams listed may push'],
] as const
const FORCE_MODES = [
  ['none', 'Disable force push'],
  ['all', 'Enable force push: anyone who may push may force-push'],
  ['whitelist', 'Allowlisted force push: only the users and teams listed'],
] as const
const RULE_FLAGS = [
  ['dismiss_stale_approvals', 'Dismiss stale approvals when new commits are pushed'],
  ['ignore_stale_approvals', 'Ignore stale approvals (they do not count toward the required approvals)'],
  ['block_on_rejected_reviews', 'Block merge on rejected reviews'],
  ['block_on_official_review_requests', 'Block merge on official review requests'],
  ['block_on_outdated_branch', 'Block merge if the pull request is outdated'],
  ['block_admin_merge_override', 'Administrators must follow the rule too'],
  ['require_signed_commits', 'Require signed commits'],
] as const

const BranchRuleForm = t.Object({
  _csrf: CsrfText,
  rule_id: FormText(20),
  rule_name: FormText(255),
  enable_push: FormText(16),
  push_whitelist_users: NamesText,
  push_whitelist_teams: NamesText,
  push_whitelist_deploy_keys: FormCheck,
  enable_force_push: FormText(16),
  force_push_allowlist_users: NamesText,
  force_push_allowlist_teams: NamesText,
  force_push_allowlist_deploy_keys: FormCheck,
  enable_merge_whitelist: FormCheck,
  merge_whitelist_users: NamesText,
  merge_whitelist_teams: NamesText,
  required_approvals: FormText(10),
  enable_approvals_whitelist: FormCheck,
  approvals_whitelist_users: NamesText,
  approvals_whitelist_teams: NamesText,
  enable_status_check: FormCheck,
  status_check_contexts: FormText(100 * 257),
  protected_file_patterns: PatternsText,
  unprotected_file_patterns: PatternsText,
  ...Object.fromEntries(RULE_FLAGS.map(([name]) => [name, FormCheck])),
})
type RuleValues = Record<string, string | undefined>

const TagRuleForm = t.Object({ _csrf: CsrfText, name_pattern: FormText(255), allowlist_users: NamesText, allowlist_teams: NamesText })
type TagValues = Partial<typeof TagRuleForm.static>

const namesOf = (text: string | undefined): string[] => (text ?? '').split(/[\s,]+/).filter(Boolean)
const linesOf = (text: string | undefined): string[] => (text ?? '').split(/\r?\n/).map((l) => l.trim()).filter(Boolean)
const check = (on: boolean) => (on ? 'on' : undefined)

/** What a typed option must be, as the API's own schema says (its bounds): 422 with the field named otherwise. */
function checkedAsApi<T>(checker: () => TypeCheck<any>, input: T): T {
  const error = checker().Errors(input).First()
  if (error) throw unprocessable(`${error.path.replace(/^\//, '').replace(/\/\d+$/, '') || 'form'}: ${error.message}`)
  return input
}
const branchChecker = compiledAtFirstUse(EditBranchProtectionOption)
const tagChecker = compiledAtFirstUse(EditTagProtectionOption)
const prioritiesChecker = compiledAtFirstUse(UpdateBranchProtectionPriories)

/** The rule form as the API's EditBranchProtectionOption. */
function branchInputOf(body: RuleValues): EditBranchProtectionInput {
  const push = body.enable_push ?? 'none'
  const force = body.enable_force_push ?? 'none'
  const approvals = (body.required_approvals ?? '').trim()
  const required = approvals === '' ? 0 : Number(approvals)
  if (!/^\d+$/.test(approvals || '0')) throw unprocessable('required_approvals: must be a whole number, 0 or more')
  const input: EditBranchProtectionInput = {
    enable_push: push !== 'none',
    enable_push_whitelist: push === 'whitelist',
    push_whitelist_usernames: namesOf(body.push_whitelist_users),
    push_whitelist_teams: namesOf(body.push_whitelist_teams),
    push_whitelist_deploy_keys: ticked(body.push_whitelist_deploy_keys),
    enable_force_push: force !== 'none',
    enable_force_push_allowlist: force === 'whitelist',
    force_push_allowlist_usernames: namesOf(body.force_push_allowlist_users),
    force_push_allowlist_teams: namesOf(body.force_push_allowlist_teams),
    force_push_allowlist_deploy_keys: ticked(body.force_push_allowlist_deploy_keys),
    enable_merge_whitelist: ticked(body.enable_merge_whitelist),
    merge_whitelist_usernames: namesOf(body.merge_whitelist_users),
    merge_whitelist_teams: namesOf(body.merge_whitelist_teams),
    required_approvals: required,
    enable_approvals_whitelist: ticked(body.enable_approvals_whitelist),
    approvals_whitelist_username: namesOf(body.approvals_whitelist_users),
    approvals_whitelist_teams: namesOf(body.approvals_whitelist_teams),
    enable_status_check: ticked(body.enable_status_check),
    status_check_contexts: linesOf(body.status_check_contexts),
    protected_file_patterns: body.protected_file_patterns ?? '',
    unprotected_file_patterns: body.unprotected_file_patterns ?? '',
    ...Object.fromEntries(RULE_FLAGS.map(([name]) => [name, ticked(body[name])])),
  }
  return checkedAsApi(branchChecker, input)
}

type ApiBranchRule = Awaited<ReturnType<typeof branchProtectionsToApi>>[number]

/** A rule's record as the form's values. */
function valuesOfRule(r: ApiBranchRule): RuleValues {
  return {
    rule_name: r.rule_name,
    enable_push: !r.enable_push ? 'none' : r.enable_push_whitelist ? 'whitelist' : 'all',
    push_whitelist_users: r.push_whitelist_usernames.join(', '),
    push_whitelist_teams: r.push_whitelist_teams.join(', '),
    push_whitelist_deploy_keys: check(r.push_whitelist_deploy_keys),
    enable_force_push: !r.enable_force_push ? 'none' : r.enable_force_push_allowlist ? 'whitelist' : 'all',
    force_push_allowlist_users: r.force_push_allowlist_usernames.join(', '),
    force_push_allowlist_teams: r.force_push_allowlist_teams.join(', '),
    force_push_allowlist_deploy_keys: check(r.force_push_allowlist_deploy_keys),
    enable_merge_whitelist: check(r.enable_merge_whitelist),
    merge_whitelist_users: r.merge_whitelist_usernames.join(', '),
    merge_whitelist_teams: r.merge_whitelist_teams.join(', '),
    required_approvals: String(r.required_approvals),
    enable_approvals_whitelist: check(r.enable_approvals_whitelist),
    approvals_whitelist_users: r.approvals_whitelist_username.join(', '),
    approvals_whitelist_teams: r.approvals_whitelist_teams.join(', '),
    enable_status_check: check(r.enable_status_check),
    status_check_contexts: r.status_check_contexts.join('\n'),
    protected_file_patterns: r.protected_file_patterns,
    unprotected_file_patterns: r.unprotected_file_patterns,
    ...Object.fromEntries(RULE_FLAGS.map(([name]) => [name, check(r[name])])),
  }
}

/** The rule of `id` in this repository (404 otherwise), as the API's record. */
async function branchRuleById(deps: AppDeps, ctx: RepoContext, idText: string): Promise<ApiBranchRule & { id: number }> {
  const id = pathNumber(idText)
  const row = (await listBranchRules(deps, ctx.repo.id)).find((r) => r.id === id)
  if (!row) throw new ApiError(404, 'The branch protection rule does not exist.')
  return { ...(await branchProtectionsToApi(deps, [row]))[0]!, id: row.id }
}

/** The rules' ids in their order with the `i`th one moved up a place, as the priority form sends them. */
const movedUp = (rows: { id: number }[], i: number): string => {
  const ids = rows.map((r) => r.id)
  ;[ids[i - 1], ids[i]] = [ids[i]!, ids[i - 1]!]
  return ids.join(',')
}

/** The priority form's ids, as the API's UpdateBranchProtectionPriories. */
function prioritiesOf(text: string | undefined): number[] {
  const ids = (text ?? '').split(',').filter(Boolean).map(Number)
  if (ids.some((id) => !Number.isSafeInteger(id))) throw unprocessable('ids: a list of rule ids, separated by commas')
  return checkedAsApi(prioritiesChecker, { ids }).ids ?? []
}

// ---- branches -----------------------------------------------------------------------------------

async function branchRulesPage(deps: AppDeps, ctx: RepoContext, web: WebContext, opts: { error?: string; status?: number } = {}) {
  const rows = await listBranchRules(deps, ctx.repo.id)
  const rules = await branchProtectionsToApi(deps, rows)
  const b = `${base(ctx)}/branches`
  const body = (
    <>
      <p>
        <a class="button primary" href={`${b}/edit`}>
          Add a protection rule
        </a>
      </p>
      <div class="box">
        <ListTable label="Branch protection rules" columns={['Rule', 'Push', 'Required approvals', 'Status checks']} empty={rules.length === 0 && 'No branch is protected.'} actions>
          {rules.map((r, i) => (
            <tr>
              <td>
                <a href={`${b}/edit?rule_name=${encodeURIComponent(r.rule_name)}`}>
                  <code>{r.rule_name}</code>
                </a>
              </td>
              <td>{!r.enable_push ? 'disabled' : r.enable_push_whitelist ? 'allowlisted' : 'all writers'}</td>
              <td>{r.required_approvals}</td>
              <td>{r.enable_status_check ? r.status_check_contexts.join(', ') || 'on' : 'off'}</td>
              <td>
                {i > 0 ? <ButtonForm ctx={web} action={`${b}/priority`} label={`Move ${r.rule_name} up`} fields={{ ids: movedUp(rows, i) }} /> : null}{' '}
                <ButtonForm ctx={web} action={`${b}/${rows[i]!.id}/delete`} label={`Delete rule ${r.rule_name}`} danger />
              </td>
            </tr>
          ))}
        </ListTable>
      </div>
    </>
  )
  return settingsPage(deps, ctx, web, b, 'Branch protection', body, opts)
}

function NamesField(props: { name: string; label: string; values: RuleValues }) {
  return (
    <label>
      {props.label}
      <input name={props.name} maxlength={String(100 * 257)} value={props.values[props.name] ?? ''} placeholder="names, separated by commas" />
    </label>
  )
}

function CheckField(props: { name: string; label: string; values: RuleValues }) {
  return (
    <label class="check">
      <input type="checkbox" name={props.name} checked={ticked(props.values[props.name])} />
      {props.label}
    </label>
  )
}

function ModeField(props: { name: string; legend: string; modes: readonly (readonly [string, string])[]; values: RuleValues; children?: unknown }) {
  const chosen = props.values[props.name] ?? 'none'
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      {props.modes.map(([value, label]) => (
        <label class="check">
          <input type="radio" name={props.name} value={value} checked={chosen === value} />
          {label}
        </label>
      ))}
      {props.children as never}
    </fieldset>
  )
}

/** The rule form: a new rule (no `rule`), or the rule of that name. */
async function branchRulePage(deps: AppDeps, ctx: RepoContext, web: WebContext, rule: (ApiBranchRule & { id: number }) | undefined, opts: { values?: RuleValues; ruleName?: string; error?: string; status?: number } = {}) {
  const v: RuleValues = opts.values ?? (rule ? valuesOfRule(rule) : { rule_name: opts.ruleName ?? '', enable_push: 'none', enable_force_push: 'none', required_approvals: '0' })
  const b = `${base(ctx)}/branches`
  const team = ctx.owner.type === 1
  const body = (
    <form class="stack wide" method="post" action={`${b}/edit`}>
      <CsrfField ctx={web} />
      {rule ? (
        <>
          <input type="hidden" name="rule_id" value={String(rule.id)} />
          <input type="hidden" name="rule_name" value={rule.rule_name} />
        </>
      ) : (
        <label>
          Protected branch name pattern
          <input name="rule_name" required maxlength="255" value={v.rule_name ?? ''} placeholder="main, release/*" />
        </label>
      )}
      <ModeField name="enable_push" legend="Push" modes={PUSH_MODES} values={v}>
        <NamesField name="push_whitelist_users" label="Users allowed to push" values={v} />
        {team ? <NamesField name="push_whitelist_teams" label="Teams allowed to push" values={v} /> : null}
        <CheckField name="push_whitelist_deploy_keys" label="Deploy keys with write access may push" values={v} />
      </ModeField>
      <ModeField name="enable_force_push" legend="Force push" modes={FORCE_MODES} values={v}>
        <NamesField name="force_push_allowlist_users" label="Users allowed to force-push" values={v} />
        {team ? <NamesField name="force_push_allowlist_teams" label="Teams allowed to force-push" values={v} /> : null}
        <CheckField name="force_push_allowlist_deploy_keys" label="Deploy keys with write access may force-push" values={v} />
      </ModeField>
      <fieldset>
        <legend>Merge</legend>
        <CheckField name="enable_merge_whitelist" label="Only the users and teams listed may merge pull requests into this branch" values={v} />
        <NamesField name="merge_whitelist_users" label="Users allowed to merge" values={v} />
        {team ? <NamesField name="merge_whitelist_teams" label="Teams allowed to merge" values={v} /> : null}
      </fieldset>
      <fieldset>
        <legend>Status checks</legend>
        <CheckField name="enable_status_check" label="Require status checks to pass before merging" values={v} />
        <label>
          Status check patterns (one a line)
          <textarea name="status_check_contexts" rows="3">
            {v.status_check_contexts ?? ''}
          </textarea>
        </label>
      </fieldset>
      <fieldset>
        <legend>Approvals</legend>
        <label>
          Required approvals
          <input name="required_approvals" type="number" min="0" max="1000000" value={v.required_approvals ?? '0'} />
        </label>
        <CheckField name="enable_approvals_whitelist" label="Only approvals of the users and teams listed count" values={v} />
        <NamesField name="approvals_whitelist_users" label="Users whose approvals count" values={v} />
        {team ? <NamesField name="approvals_whitelist_teams" label="Teams whose approvals count" values={v} /> : null}
        {RULE_FLAGS.map(([name, label]) => (
          <CheckField name={name} label={label} values={v} />
        ))}
      </fieldset>
      <label>
        Protected file patterns (separated by semicolons)
        <input name="protected_file_patterns" maxlength="4096" value={v.protected_file_patterns ?? ''} />
      </label>
      <label>
        Unprotected file patterns (separated by semicolons)
        <input name="unprotected_file_patterns" maxlength="4096" value={v.unprotected_file_patterns ?? ''} />
      </label>
      <div>
        <button class="primary" type="submit">
          {rule ? 'Save rule' : 'Create rule'}
        </button>
      </div>
    </form>
  )
  return settingsPage(deps, ctx, web, b, rule ? `Branch protection rule ${rule.rule_name}` : 'New branch protection rule', body, opts)
}

// ---- tags ---------------------------------------------------------------------------------------

function tagInputOf(body: TagValues): TagProtectionInput {
  const input = { name_pattern: body.name_pattern ?? '', whitelist_usernames: namesOf(body.allowlist_users), whitelist_teams: namesOf(body.allowlist_teams) }
  return checkedAsApi(tagChecker, input)
}

function TagFields(props: { web: WebContext; ctx: RepoContext; action: string; values: TagValues; submit: string }) {
  const v = props.values
  return (
    <form class="stack wide" method="post" action={props.action}>
      <CsrfField ctx={props.web} />
      <label>
        Protected tag name pattern
        <input name="name_pattern" required maxlength="255" value={v.name_pattern ?? ''} placeholder="v*, or /^v\d+$/" />
      </label>
      <label>
        Users allowed to create and delete these tags
        <input name="allowlist_users" value={v.allowlist_users ?? ''} placeholder="names, separated by commas" />
      </label>
      {props.ctx.owner.type === 1 ? (
        <label>
          Teams allowed to create and delete these tags
          <input name="allowlist_teams" value={v.allowlist_teams ?? ''} placeholder="names, separated by commas" />
        </label>
      ) : null}
      <SubmitRow label={props.submit} />
    </form>
  )
}

async function tagRulesPage(deps: AppDeps, ctx: RepoContext, web: WebContext, opts: { values?: TagValues; error?: string; status?: number } = {}) {
  const rules = await tagProtectionsToApi(deps, await listTagRules(deps, ctx.repo.id))
  const b = `${base(ctx)}/tags`
  const body = (
    <>
      <div class="box">
        <ListTable label="Protected tag rules" columns={['Pattern', 'Allowed users', 'Allowed teams']} empty={rules.length === 0 && 'No tag is protected.'} actions>
          {rules.map((r) => (
            <tr>
              <td>
                <a href={`${b}/${r.id}`}>
                  <code>{r.name_pattern}</code>
                </a>
              </td>
              <td>{r.whitelist_usernames.join(', ') || <span class="muted">none</span>}</td>
              <td>{r.whitelist_teams.join(', ') || <span class="muted">none</span>}</td>
              <td>
                <ButtonForm ctx={web} action={`${b}/delete`} label={`Delete rule ${r.name_pattern}`} fields={{ id: String(r.id) }} danger />
              </td>
            </tr>
          ))}
        </ListTable>
      </div>
      <h3>Protect tags</h3>
      <TagFields web={web} ctx={ctx} action={b} values={opts.values ?? {}} submit="Add rule" />
    </>
  )
  return settingsPage(deps, ctx, web, b, 'Protected tags', body, opts)
}

async function tagRulePage(deps: AppDeps, ctx: RepoContext, web: WebContext, id: number, opts: { values?: TagValues; error?: string; status?: number } = {}) {
  const rule = (await tagProtectionsToApi(deps, [await getTagRule(deps, ctx.repo.id, id)]))[0]!
  const b = `${base(ctx)}/tags`
  const values = opts.values ?? { name_pattern: rule.name_pattern, allowlist_users: rule.whitelist_usernames.join(', '), allowlist_teams: rule.whitelist_teams.join(', ') }
  const body = (
    <>
      <TagFields web={web} ctx={ctx} action={`${b}/${rule.id}`} values={values} submit="Save rule" />
      <p>
        <a href={b}>Back to the protected tags</a>
      </p>
    </>
  )
  return settingsPage(deps, ctx, web, b, `Protected tag rule ${rule.name_pattern}`, body, opts)
}

const tagId = (text: string): number => {
  const n = pathNumber(text)
  if (!Number.isSafeInteger(n) || n <= 0) throw new ApiError(404, 'The tag protection rule does not exist.')
  return n
}

/** What a form of these pages is given: its request, caller and body, and the repository. */
type ProtectFormRequest<B> = FormRequest & { repo: RepoContext; params: Record<string, string>; body: B }
type Refused = { error: string; status: number }

export const protectionSettingsPages = (deps: AppDeps, webApp: AreaApp) => {
  const page = (id: string) => ({ scope: 'repository' as const, detail: pageDetail(id) })
  const web = (request: Request, ctx: RepoContext) => webContext(deps.config, request, ctx.caller)
  /** A form's POST: `act` calls the service and names the settings page to go back to with its notice; a refusal shows the page `again` makes. */
  const form =
    <B,>(act: (ctx: RepoContext, c: ProtectFormRequest<B>) => Promise<[string, string]>, again: (ctx: RepoContext, w: WebContext, c: ProtectFormRequest<B>, refused: Refused) => Promise<Response>) =>
    // Destructured: a context handed on whole has Elysia parse each request's cookies and headers.
    ({ request, caller, body, params, repo }: ProtectFormRequest<B>) => {
      const c = { request, caller, body, params, repo }
      return formRoute(
        deps.config,
        c,
        async () => {
          const [to, done] = await act(c.repo, c)
          return seeOther(`${base(c.repo)}/${to}`, done)
        },
        (w, error, status) => again(c.repo, w, c, { error, status }),
      )
    }
  return pageGroup(webApp)
    .get('/:owner/:repo/settings/branches', async ({ request, repo: ctx }) => branchRulesPage(deps, ctx, web(request, ctx)), {
      ...page('webRepoBranchProtections'),
      repo: admin(),
      params: RepoParams,
      query: t.Object({ done: FormText(40) }),
    })
    .get(
      '/:owner/:repo/settings/branches/edit',
      async ({ request, repo: ctx, query }) => {
        const name = query.rule_name ?? ''
        const row = name ? (await listBranchRules(deps, ctx.repo.id)).find((r) => r.ruleName === name) : undefined
        const rule = row ? { ...(await branchProtectionsToApi(deps, [row]))[0]!, id: row.id } : undefined
        return branchRulePage(deps, ctx, web(request, ctx), rule, { ruleName: name })
      },
      { ...page('webRepoBranchProtection'), repo: admin(), params: RepoParams, query: t.Object({ rule_name: FormText(255), done: FormText(40) }) },
    )
    .post(
      '/:owner/:repo/settings/branches/edit',
      form<RuleValues>(
        async (ctx, { body }) => {
          const input = branchInputOf(body)
          if (body.rule_id) await editBranchRule(deps, ctx, (await branchRuleById(deps, ctx, body.rule_id)).rule_name, input)
          else await createBranchRule(deps, ctx, { ...input, rule_name: body.rule_name ?? '' })
          return ['branches', 'branch-rule-saved']
        },
        async (ctx, w, { body }, refused) => {
          const rule = body.rule_id ? await branchRuleById(deps, ctx, body.rule_id).catch(() => undefined) : undefined
          return branchRulePage(deps, ctx, w, rule, { values: body, ...refused })
        },
      ),
      { ...page('webRepoBranchProtectionSave'), repo: admin(true), params: RepoParams, body: BranchRuleForm },
    )
    .post(
      '/:owner/:repo/settings/branches/priority',
      form<{ ids?: string }>(
        async (ctx, { body }) => {
          await setBranchRulePriorities(deps, ctx, prioritiesOf(body.ids))
          return ['branches', 'branch-rules-ordered']
        },
        (ctx, w, _c, refused) => branchRulesPage(deps, ctx, w, refused),
      ),
      { ...page('webRepoBranchProtectionPriority'), repo: admin(true), params: RepoParams, body: t.Object({ _csrf: CsrfText, ids: FormText(1000 * 21) }) },
    )
    .post(
      '/:owner/:repo/settings/branches/:id/delete',
      form<unknown>(
        async (ctx, { params }) => {
          await deleteBranchRule(deps, ctx, (await branchRuleById(deps, ctx, params.id!)).rule_name)
          return ['branches', 'branch-rule-deleted']
        },
        (ctx, w, _c, refused) => branchRulesPage(deps, ctx, w, refused),
      ),
      { ...page('webRepoBranchProtectionDelete'), repo: admin(true), params: RuleParams, body: t.Object({ _csrf: CsrfText }) },
    )
    .get('/:owner/:repo/settings/tags', async ({ request, repo: ctx }) => tagRulesPage(deps, ctx, web(request, ctx)), {
      ...page('webRepoTagProtections'),
      repo: admin(),
      params: RepoParams,
      query: t.Object({ done: FormText(40) }),
    })
    .post(
      '/:owner/:repo/settings/tags',
      form<TagValues>(
        async (ctx, { body }) => {
          await createTagRule(deps, ctx, tagInputOf(body))
          return ['tags', 'tag-rule-added']
        },
        (ctx, w, { body }, refused) => tagRulesPage(deps, ctx, w, { values: body, ...refused }),
      ),
      { ...page('webRepoTagProtectionAdd'), repo: admin(true), params: RepoParams, body: TagRuleForm },
    )
    .post(
      '/:owner/:repo/settings/tags/delete',
      form<{ id?: string }>(
        async (ctx, { body }) => {
          await deleteTagRule(deps, ctx, tagId(body.id ?? ''))
          return ['tags', 'tag-rule-deleted']
        },
        (ctx, w, _c, refused) => tagRulesPage(deps, ctx, w, refused),
      ),
      { ...page('webRepoTagProtectionDelete'), repo: admin(true), params: RepoParams, body: t.Object({ _csrf: CsrfText, id: FormText(20) }) },
    )
    .get('/:owner/:repo/settings/tags/:id', async ({ request, repo: ctx, params }) => tagRulePage(deps, ctx, web(request, ctx), tagId(params.id)), {
      ...page('webRepoTagProtection'),
      repo: admin(),
      params: RuleParams,
      query: t.Object({ done: FormText(40) }),
    })
    .post(
      '/:owner/:repo/settings/tags/:id',
      form<TagValues>(
        async (ctx, { params, body }) => {
          await editTagRule(deps, ctx, tagId(params.id!), tagInputOf(body))
          return ['tags', 'tag-rule-saved']
        },
        (ctx, w, { params, body }, refused) => tagRulePage(deps, ctx, w, tagId(params.id!), { values: body, ...refused }),
      ),
      { ...page('webRepoTagProtectionEdit'), repo: admin(true), params: RuleParams, body: TagRuleForm },
    )
}
