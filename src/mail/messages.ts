import type { Config } from '../config'
import { escapeHtml } from '../lib/html'
import type { MailMessage } from './queue'

/*
 * The mails Warren sends, each as plain text and HTML: every value a user chose (names, titles,
 * comments) escaped in the HTML and kept to one line in the subject, every link built from the
 * configured root URL (WARREN_BASE_URL), never from a request's Host.
 */

/** Longest subject kept (a longer title is cut). */
const MAX_SUBJECT = 200
/** Longest comment or description quoted in a notification mail. */
const MAX_QUOTED = 20_000

/**
 * A header value on one line: control characters (CR, LF and the rest) become spaces, so a name
 * or title can never end the header and start another; bounded.
 */
export function oneLine(value: string, max = MAX_SUBJECT): string {
  const flat = value.replace(/[\x00-\x1f\x7f\u2028\u2029]+/g, ' ').trim()
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat
}

/** A link under the root URL (its path's segments already encoded by the caller). */
const link = (config: Config, path: string) => config.baseUrl + path

/** A paragraph of text as HTML: escaped, its line breaks kept. */
const paragraph = (text: string) => `<p>${escapeHtml(text).replace(/\r?\n/g, '<br>')}</p>`

/** The HTML frame of every mail. */
function htmlOf(title: string, inner: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${inner}</body></html>`
}

/** A mail with one call to action: its text and HTML say the same. */
function actionMail(config: Config, to: string, subject: string, lines: string[], action: { label: string; url: string }, after: string[] = []): MailMessage {
  const s = oneLine(subject)
  return {
    to,
    subject: s,
    text: [...lines, '', `${action.label}: ${action.url}`, '', ...after, '', `— ${config.baseUrl}`].join('\n'),
    html: htmlOf(
      s,
      lines.map(paragraph).join('') + `<p><a href="${escapeHtml(action.url)}">${escapeHtml(action.label)}</a></p>` + after.map(paragraph).join('') + paragraph(`— ${config.baseUrl}`),
    ),
  }
}

const minutes = (seconds: number) => `${Math.round(seconds / 60)} minutes`

/** Gitea's activate account mail: the link of `/user/activate?code=`. */
export function activationMail(config: Config, user: { name: string; email: string }, code: string): MailMessage {
  return actionMail(
    config,
    user.email,
    'Please activate your account',
    [`Hi ${user.name},`, `Thank you for registering at ${config.baseUrl}. Please activate your account within ${minutes(config.activeCodeLifetime)} by following the link below.`],
    { label: 'Activate your account', url: link(config, `user/activate?code=${encodeURIComponent(code)}`) },
    ['If you did not register, you can ignore this mail.'],
  )
}

/** Gitea's activate email mail: the link of `/user/activate_email?code=&email=`. */
export function emailActivationMail(config: Config, user: { name: string }, email: string, code: string): MailMessage {
  return actionMail(
    config,
    email,
    'Please verify your e-mail address',
    [`Hi ${user.name},`, `Please confirm within ${minutes(config.activeCodeLifetime)} that ${email} is your address by following the link below.`],
    { label: 'Verify this address', url: link(config, `user/activate_email?code=${encodeURIComponent(code)}&email=${encodeURIComponent(email)}`) },
    ['If you did not add this address, you can ignore this mail.'],
  )
}

/** Gitea's reset password mail: the link of `/user/recover_account?code=`. */
export function resetPasswordMail(config: Config, user: { name: string; email: string }, code: string): MailMessage {
  return actionMail(
    config,
    user.email,
    'Recover your account',
    [`Hi ${user.name},`, `A new password was asked for your account at ${config.baseUrl}. Choose one within ${minutes(config.resetPasswordCodeLifetime)} by following the link below.`],
    { label: 'Choose a new password', url: link(config, `user/recover_account?code=${encodeURIComponent(code)}`) },
    ['If you did not ask for it, you can ignore this mail: your password stays as it is.'],
  )
}

/** The site administrator's test mail (`/-/admin/config/test_mail`). */
export function testMail(config: Config, to: string): MailMessage {
  const subject = 'Warren test mail'
  const text = `This is a test mail from ${config.baseUrl}: the mailer works.`
  return { to, subject, text, html: htmlOf(subject, paragraph(text)) }
}

/** What an issue or pull request event says in a notification mail. */
const SAYS: Record<string, string> = {
  'issue.opened': 'opened',
  'pull.opened': 'opened',
  'comment.created': 'commented on',
  'issue.closed': 'closed',
  'issue.reopened': 'reopened',
  'pull.merged': 'merged',
  'pull.synchronized': 'pushed to',
  'issue.assigned': 'assigned you to',
  'review.submitted': 'reviewed',
  'review.requested': 'asked for your review of',
}

/** One notification of an issue or pull request event, as Gitea's issue mails: `[owner/repo] Title (#N)`. */
export interface IssueMailInput {
  kind: string
  repoFullName: string
  issue: { index: number; title: string; isPull: boolean }
  actorName: string
  /** The new comment's or the new issue's text, quoted ('' for none). */
  body: string
  commentId: number
}

export function issueNotificationMail(config: Config, to: string, input: IssueMailInput): MailMessage {
  const { issue } = input
  const [owner, name] = input.repoFullName.split('/') as [string, string]
  const path = `${encodeURIComponent(owner)}/${encodeURIComponent(name)}/${issue.isPull ? 'pulls' : 'issues'}/${issue.index}`
  const url = link(config, path) + (input.commentId ? `#issuecomment-${input.commentId}` : '')
  const subject = oneLine(`[${input.repoFullName}] ${issue.title} (#${issue.index})`)
  const what = `${input.actorName} ${SAYS[input.kind] ?? 'updated'} ${issue.isPull ? 'pull request' : 'issue'} ${input.repoFullName}#${issue.index}.`
  const quoted = input.body.length > MAX_QUOTED ? input.body.slice(0, MAX_QUOTED) + '…' : input.body
  return {
    to,
    subject,
    text: [what, ...(quoted ? ['', quoted] : []), '', `View it on Warren: ${url}`, '', 'You receive this because you take part in it or watch the repository; your settings choose which mails you get.'].join('\n'),
    html: htmlOf(
      subject,
      paragraph(what) +
        (quoted ? `<blockquote>${paragraph(quoted)}</blockquote>` : '') +
        `<p><a href="${escapeHtml(url)}">View it on Warren</a></p>` +
        `<p><small>You receive this because you take part in it or watch the repository; <a href="${escapeHtml(link(config, 'user/settings/account'))}">your settings</a> choose which mails you get.</small></p>`,
    ),
  }
}
