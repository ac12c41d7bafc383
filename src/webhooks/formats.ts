import type { HookEventType, HookType } from './events'

/**
 * What a delivery's body says, per hook type: `gitea` and `gogs` send the payload
 * itself; Gitea 1.3–1.14's `secret` field comes first only when WARREN_WEBHOOK_PAYLOAD_SECRET asks
 * for it (off by default: as Gitea since 1.15, the secret only keys the signature headers of
 * deliver.ts and never travels in a body a receiver or a proxy may log); the chat types send
 * their service's message shape, with a short human-readable summary of the event.
 */

/** Settings of the chat types, from the hook's `meta` (slack: channel, username, icon_url, color). */
export type HookMeta = Record<string, string>

type Payload = Record<string, any>

interface Summary {
  title: string
  text: string
  url: string
}

const repoName = (p: Payload) => String(p.repository?.full_name ?? '')
const who = (p: Payload) => String(p.sender?.login ?? '')
const firstLine = (s: string) => s.split('\n')[0] ?? ''

/** A one-line title, a body text and a link for an event of `type`. */
export function summarize(type: HookEventType, p: Payload): Summary {
  const repo = repoName(p)
  const repoUrl = String(p.repository?.html_url ?? '')
  switch (type) {
    case 'push': {
      const branch = String(p.ref ?? '').replace(/^refs\/(heads|tags)\//, '')
      const n = Number(p.total_commits ?? p.commits?.length ?? 0)
      const lines = (p.commits ?? []).map((c: Payload) => `${String(c.id).slice(0, 10)}: ${firstLine(String(c.message))} - ${c.author?.name ?? ''}`)
      return { title: `[${repo}:${branch}] ${n} new commit${n === 1 ? '' : 's'}`, text: lines.join('\n'), url: p.compare_url || repoUrl }
    }
    case 'create':
      return { title: `[${repo}] ${p.ref_type} ${p.ref} created`, text: `by ${who(p)}`, url: repoUrl }
    case 'delete':
      return { title: `[${repo}] ${p.ref_type} ${p.ref} deleted`, text: `by ${who(p)}`, url: repoUrl }
    case 'fork':
      return { title: `${p.forkee?.full_name} is forked to ${p.repository?.full_name}`, text: `by ${who(p)}`, url: String(p.repository?.html_url ?? '') }
    case 'repository':
      return { title: `[${repo}] Repository ${p.action}`, text: `by ${who(p)}`, url: repoUrl }
    case 'issue_comment':
    case 'pull_request_comment':
      return {
        title: `[${repo}] Comment ${p.action} on ${p.is_pull ? 'pull request' : 'issue'} #${p.issue?.number}: ${p.issue?.title}`,
        text: String(p.comment?.body ?? ''),
        url: String(p.comment?.html_url ?? p.issue?.html_url ?? ''),
      }
    case 'status':
      return { title: `[${repo}] Commit status: ${p.state} ${p.context}`.trim(), text: `${p.description ?? ''}\n${String(p.sha ?? '').slice(0, 10)}`.trim(), url: p.target_url || repoUrl }
    case 'release':
      return { title: `[${repo}] Release ${p.action}: ${p.release?.tag_name ?? ''}`, text: String(p.release?.name ?? ''), url: String(p.release?.html_url ?? repoUrl) }
    case 'wiki':
      return { title: `[${repo}] Wiki page '${p.page}' ${p.action}`, text: String(p.comment ?? ''), url: `${repoUrl}/wiki/${p.page}` }
    case 'package':
      // An owner's event: no repository (Gitea's "Package created: name:version").
      return { title: `Package ${p.action}: ${p.package?.name ?? ''}:${p.package?.version ?? ''}`, text: `by ${who(p)}`, url: String(p.package?.html_url ?? '') }
    default: {
      // Issues and pull requests in all their kinds.
      const item = p.pull_request ?? p.issue ?? {}
      const noun = p.pull_request ? 'Pull request' : 'Issue'
      return {
        title: `[${repo}] ${noun} ${String(p.action ?? type).replace(/_/g, ' ')}: #${item.number ?? p.number ?? ''} ${item.title ?? ''}`.trim(),
        text: p.action === 'opened' ? String(item.body ?? '') : '',
        url: String(item.html_url ?? repoUrl),
      }
    }
  }
}

const SLACK_DEFAULT_COLOR = '#2fb5ea'

/** Slack's incoming-webhook message (links written Slack's way, `<url|text>`). */
function slackBody(meta: HookMeta, s: Summary) {
  const escape = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  return {
    channel: meta.channel ?? '',
    text: s.url ? `<${s.url}|${escape(s.title)}>` : escape(s.title),
    username: meta.username ?? '',
    icon_url: meta.icon_url ?? '',
    unfurl_links: false,
    link_names: false,
    attachments: s.text ? [{ fallback: escape(s.title), color: meta.color || SLACK_DEFAULT_COLOR, title: '', text: escape(s.text) }] : [],
  }
}

/** Discord's webhook message: one embed. */
function discordBody(p: Payload, s: Summary) {
  return {
    wait: false,
    content: '',
    username: '',
    avatar_url: '',
    tts: false,
    embeds: [
      {
        title: s.title.slice(0, 256),
        description: s.text.slice(0, 4096),
        url: s.url,
        color: 0x2fb5ea,
        author: { name: who(p), url: String(p.sender?.html_url ?? ''), icon_url: String(p.sender?.avatar_url ?? '') },
      },
    ],
  }
}

/** DingTalk's action card. */
function dingtalkBody(s: Summary) {
  return {
    msgtype: 'actionCard',
    actionCard: { text: `${s.title}\r\n\r\n${s.text}`, title: s.title, hideAvatar: '0', singleTitle: 'view', singleURL: s.url },
  }
}

/**
 * The payload's JSON text as gitea/gogs hooks are sent it, made once per event and shared by all
 * its hooks (the text with the secret is this one with the field spliced in, see deliveryText).
 * Gitea indents with two spaces; receivers must not care, but the signature covers these bytes.
 */
export const payloadJson = (payload: Payload): string => JSON.stringify(payload, null, 2)

/**
 * The text a hook of `type` is sent for a payload (the text that is signed). `json` is
 * payloadJson(payload) when the caller has it already (one per event, whatever the number of
 * hooks). With `withSecret` (the opt-in setting), Gitea 1.3's `secret` comes first: spliced in
 * front of the other fields, which gives the very text JSON.stringify({ secret, ...payload }, null, 2)
 * would. The text is stored on the task as made, so a later change of the setting or of the secret
 * never changes what a repeat of the task sends.
 */
export function deliveryText(
  type: HookType,
  eventType: HookEventType,
  payload: Payload,
  opts: { secret: string; withSecret: boolean; meta: HookMeta; json?: string },
): string {
  if (type === 'gitea' || type === 'gogs') {
    const json = opts.json ?? payloadJson(payload)
    if (!opts.withSecret) return json
    return json === '{}' ? JSON.stringify({ secret: opts.secret }, null, 2) : `{\n  "secret": ${JSON.stringify(opts.secret)},\n${json.slice(2)}`
  }
  const summary = summarize(eventType, payload)
  if (type === 'slack') return JSON.stringify(slackBody(opts.meta, summary))
  if (type === 'discord') return JSON.stringify(discordBody(payload, summary))
  return JSON.stringify(dingtalkBody(summary))
}
