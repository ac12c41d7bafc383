/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { notFound } from '../../lib/errors'
import { jobBoardOf, type JobInfo } from '../../lib/job-board'
import { configSummary } from '../../modules/admin/config-summary'
import { processStatus, siteCounts, type SiteCounts } from '../../modules/admin/stats'
import { pageDetail, webContext, type WebContext } from '../context'
import { CsrfField, CsrfText, FormText, formRoute, ListTable, seeOther, SubmitRow } from '../forms'
import { queueTestMail } from '../../modules/admin/test-mail'
import { adminPage } from './admin'

/*
 * The site administration's dashboard (`/-/admin`: the site's counts, the process's status, its
 * background jobs with "run now", Gitea's operations) and configuration summary (`/-/admin/config`).
 */

const COUNT_LABELS: [keyof SiteCounts, string][] = [
  ['users', 'Users'],
  ['organisations', 'Organisations'],
  ['repositories', 'Repositories'],
  ['mirrors', 'Mirrors'],
  ['issues', 'Issues'],
  ['pulls', 'Pull requests'],
  ['comments', 'Comments'],
  ['milestones', 'Milestones'],
  ['labels', 'Labels'],
  ['releases', 'Releases'],
  ['stars', 'Stars'],
  ['watches', 'Watches'],
  ['follows', 'Follows'],
  ['publicKeys', 'SSH keys'],
  ['teams', 'Teams'],
  ['webhooks', 'Webhooks'],
  ['attachments', 'Attachments'],
  ['accessTokens', 'Access tokens'],
  ['oauth2Applications', 'OAuth2 applications'],
]

const MiB = 1024 * 1024
const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`
const when = (ms: number | null) => (ms === null ? '—' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC')

function duration(seconds: number): string {
  const d = Math.floor(seconds / 86_400)
  const h = Math.floor((seconds % 86_400) / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const parts = [d ? `${d} d` : '', h ? `${h} h` : '', m ? `${m} min` : '', `${seconds % 60} s`].filter(Boolean)
  return parts.join(' ')
}

async function dashboard(deps: AppDeps, web: WebContext, opts: { error?: string; status?: number } = {}): Promise<Response> {
  const [counts, status] = [await siteCounts(deps), processStatus()]
  const jobs = jobBoardOf(deps).list()
  return adminPage(
    web,
    '/-/admin',
    'Dashboard',
    <>
      <section aria-labelledby="admin-counts">
        <h3 id="admin-counts">What the site holds</h3>
        <ListTable label="Site counts" columns={['Record', 'Count']}>
          {COUNT_LABELS.map(([key, label]) => (
            <tr>
              <td>{label}</td>
              <td>{counts[key]}</td>
            </tr>
          ))}
        </ListTable>
      </section>
      <section aria-labelledby="admin-status">
        <h3 id="admin-status">System status</h3>
        <ListTable label="System status" columns={['Measure', 'Value']}>
          <tr>
            <td>Uptime</td>
            <td>{duration(status.uptimeSeconds)}</td>
          </tr>
          <tr>
            <td>Resident memory</td>
            <td>{mib(status.rssBytes)}</td>
          </tr>
          <tr>
            <td>JavaScript heap in use</td>
            <td>
              {mib(status.heapUsedBytes)} of {mib(status.heapTotalBytes)}
            </td>
          </tr>
          <tr>
            <td>Memory outside the heap</td>
            <td>{mib(status.externalBytes)}</td>
          </tr>
          <tr>
            <td>Runtime</td>
            <td>
              {status.runtime} on {status.platform}, process {status.pid}
            </td>
          </tr>
        </ListTable>
      </section>
      <section aria-labelledby="admin-jobs">
        <h3 id="admin-jobs">Background jobs of this process</h3>
        <JobsTable web={web} jobs={jobs} from="dashboard" />
      </section>
    </>,
    opts,
  )
}

/**
 * The background jobs of this process (the board `GET /admin/cron` lists), each with its "Run"
 * button: Gitea's operation form, POST `/-/admin` with `op` and `from` (where to come back).
 */
function JobsTable(props: { web: WebContext; jobs: JobInfo[]; from: 'dashboard' | 'monitor' }) {
  const { web, jobs } = props
  return (
    <ListTable label="Background jobs" columns={['Job', 'Schedule', 'Last run', 'Next run', 'Runs']} actions empty={jobs.length ? false : 'No background job runs in this process.'}>
      {jobs.map((job) => (
        <tr>
          <td>{job.name}</td>
          <td>{job.schedule}</td>
          <td>{when(job.prev)}</td>
          <td>{when(job.next)}</td>
          <td>{job.execTimes}</td>
          <td>
            <form class="inline" method="post" action="/-/admin">
              <CsrfField ctx={web} />
              <input type="hidden" name="op" value={job.name} />
              <input type="hidden" name="from" value={props.from} />
              <button type="submit" class="secondary" aria-label={`Run ${job.name} now`}>
                Run
              </button>
            </form>
          </td>
        </tr>
      ))}
    </ListTable>
  )
}

/** Gitea 1.23's `/-/admin/monitor/cron`: the cron tasks, here the background jobs this process runs. */
function cronPage(deps: AppDeps, web: WebContext, opts: { error?: string; status?: number } = {}): Response {
  return adminPage(
    web,
    CRON,
    'Cron tasks',
    <>
      <p class="muted">The background jobs this process runs, as the API's <code>/admin/cron</code> lists them. Times are UTC.</p>
      <JobsTable web={web} jobs={jobBoardOf(deps).list()} from="monitor" />
    </>,
    opts,
  )
}

function configPage(deps: AppDeps, web: WebContext, opts: { error?: string; status?: number } = {}): Response {
  return adminPage(
    web,
    '/-/admin/config',
    'Configuration',
    <>
      <p class="muted">The settings this process runs with, each with the environment variable that sets it. Secrets are never shown.</p>
      {deps.config.mailer ? (
        <section aria-labelledby="test-mail">
          <h3 id="test-mail">Test mail</h3>
          <form class="stack" method="post" action="/-/admin/config/test_mail">
            <CsrfField ctx={web} />
            <label>
              Send a test mail to
              <input name="email" type="email" maxlength="254" required value={web.caller.user?.email ?? ''} />
            </label>
            <SubmitRow label="Send test mail" />
          </form>
        </section>
      ) : null}
      {configSummary(deps.config).map((group) => (
        <section aria-label={group.title}>
          <h3>{group.title}</h3>
          <ListTable label={`${group.title} settings`} columns={['Setting', 'Variable', 'Value']}>
            {group.settings.map((s) => (
              <tr>
                <td>{s.label}</td>
                <td>
                  <code>{s.variable}</code>
                </td>
                <td>{s.value}</td>
              </tr>
            ))}
          </ListTable>
        </section>
      ))}
    </>,
    opts,
  )
}

const TestMailForm = t.Object({ _csrf: CsrfText, email: FormText(320) })

const DoneQuery = t.Object({ done: FormText(40) })
const OperationForm = t.Object({ _csrf: CsrfText, op: FormText(100), from: FormText(20) })
const CRON = '/-/admin/monitor/cron'

/** `/-/admin` and `/-/admin/config`: site administrators only (the pipeline's siteAdmin need). */
export const adminSystemPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get('/-/admin', ({ request, caller }) => dashboard(deps, webContext(deps.config, request, caller)), {
      scope: 'admin', siteAdmin: true,
      query: DoneQuery,
      detail: pageDetail('webAdminDashboard'),
    })
    .post(
      '/-/admin',
      ({ request, caller, body }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            // The same board `/admin/cron/{task}` runs its jobs from.
            if (!jobBoardOf(deps).runNow(body.op ?? '')) throw notFound(`No background job named "${body.op ?? ''}" runs in this process.`)
            // Gitea's `from=monitor`: back to the cron tasks' page the button was on.
            return seeOther(body.from === 'monitor' ? CRON : '/-/admin', 'job-started')
          },
          (web, error, status) => (body.from === 'monitor' ? cronPage(deps, web, { error, status }) : dashboard(deps, web, { error, status })),
        ),
      { scope: 'admin', siteAdmin: true, body: OperationForm, detail: pageDetail('webAdminDashboardOperation') },
    )
    .get(CRON, ({ request, caller }) => cronPage(deps, webContext(deps.config, request, caller)), {
      scope: 'admin', siteAdmin: true,
      query: DoneQuery,
      detail: pageDetail('webAdminCron'),
    })
    .get('/-/admin/config', ({ request, caller }) => configPage(deps, webContext(deps.config, request, caller)), {
      scope: 'admin',
      siteAdmin: true,
      query: DoneQuery,
      detail: pageDetail('webAdminConfig'),
    })
    .post(
      '/-/admin/config/test_mail',
      ({ request, caller, body }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            // Gitea's SendTestMail: queued like every mail, so the page answers whatever the SMTP server does.
            await queueTestMail(deps, (body.email ?? '').trim())
            return seeOther('/-/admin/config', 'test-mail-queued')
          },
          (web, error, status) => configPage(deps, web, { error, status }),
        ),
      { scope: 'admin', siteAdmin: true, body: TestMailForm, detail: pageDetail('webAdminTestMail') },
    )
