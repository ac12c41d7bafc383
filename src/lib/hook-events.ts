/**
 * Hook types, event names and how outbox events map onto them (webhooks.md §1, §4). The
 * fine-grained event types are modern Gitea's HookEventType; `X-Gitea-Event` carries the coarse
 * name of each (`eventName`).
 */

/** The hook types Warren delivers to. */
export const HOOK_TYPES = ['gitea', 'gogs', 'slack', 'discord', 'dingtalk'] as const
export type HookType = (typeof HOOK_TYPES)[number]

export const CONTENT_TYPES = ['json', 'form'] as const
export type ContentType = (typeof CONTENT_TYPES)[number]

/** push_only / send_everything / choose_events (Gitea's HookEvent). */
export const EVENT_MODES = ['push_only', 'send_everything', 'choose_events'] as const
export type EventMode = (typeof EVENT_MODES)[number]

/** Every fine-grained event type a hook can choose, in the order a Hook record lists them. */
export const HOOK_EVENT_TYPES = [
  'create',
  'delete',
  'fork',
  'push',
  'issues',
  'issue_assign',
  'issue_label',
  'issue_milestone',
  'issue_comment',
  'pull_request',
  'pull_request_assign',
  'pull_request_label',
  'pull_request_milestone',
  'pull_request_comment',
  'pull_request_review_approved',
  'pull_request_review_rejected',
  'pull_request_review_comment',
  'pull_request_sync',
  'pull_request_review_request',
  'wiki',
  'repository',
  'release',
  'package',
  'status',
] as const
export type HookEventType = (typeof HOOK_EVENT_TYPES)[number]

const ISSUE_TYPES: HookEventType[] = ['issues', 'issue_assign', 'issue_label', 'issue_milestone', 'issue_comment']
const REVIEW_TYPES: HookEventType[] = ['pull_request_review_approved', 'pull_request_review_rejected', 'pull_request_review_comment']
const PULL_TYPES: HookEventType[] = [
  'pull_request',
  'pull_request_assign',
  'pull_request_label',
  'pull_request_milestone',
  'pull_request_comment',
  ...REVIEW_TYPES,
  'pull_request_sync',
  'pull_request_review_request',
]

/**
 * Names accepted in `events` beside the types themselves, as modern Gitea reads them: `issues`
 * and `pull_request` select everything about issues / pull requests, `issues_only` and
 * `pull_request_only` the base kind, `pull_request_review` the three review types.
 */
const EVENT_GROUPS: Record<string, HookEventType[]> = {
  issues: ISSUE_TYPES,
  issues_only: ['issues'],
  pull_request: PULL_TYPES,
  pull_request_only: ['pull_request'],
  pull_request_review: REVIEW_TYPES,
}

/** The names `events` accepts (for messages and the schema's description). */
export const ACCEPTED_EVENT_NAMES = [...new Set([...HOOK_EVENT_TYPES, ...Object.keys(EVENT_GROUPS)])]

/**
 * The set of event types a hook's `events` list selects (absent or empty: push, as Gitea), in
 * HOOK_EVENT_TYPES order; the first unknown name is returned as `unknown`.
 */
export function selectEvents(names: readonly string[] | undefined): { types: HookEventType[]; unknown?: string } {
  const chosen = new Set<HookEventType>()
  for (const raw of names?.length ? names : ['push']) {
    const name = raw.trim().toLowerCase()
    const group = EVENT_GROUPS[name] ?? ((HOOK_EVENT_TYPES as readonly string[]).includes(name) ? [name as HookEventType] : null)
    if (!group) return { types: [], unknown: raw }
    for (const type of group) chosen.add(type)
  }
  return { types: HOOK_EVENT_TYPES.filter((t) => chosen.has(t)) }
}

/** The coarse event name of a type: X-Gitea-Event (Gitea's HookEventType.Event()). */
export function eventName(type: HookEventType): string {
  if (ISSUE_TYPES.includes(type) && type !== 'issue_comment') return 'issues'
  if (type === 'issue_comment' || type === 'pull_request_comment') return 'issue_comment'
  if (type === 'pull_request_review_approved') return 'pull_request_approved'
  if (type === 'pull_request_review_rejected') return 'pull_request_rejected'
  if (type === 'pull_request_review_comment') return 'pull_request_comment'
  if (PULL_TYPES.includes(type)) return 'pull_request'
  return type
}

/**
 * The body a delivery sends: the payload's text itself (`json`), or as the `payload` field of
 * a form (`form`, Gitea's application/x-www-form-urlencoded hooks).
 */
export const deliveryBody = (d: { contentType: string; payload: string }): string =>
  d.contentType === 'form' ? new URLSearchParams({ payload: d.payload }).toString() : d.payload
