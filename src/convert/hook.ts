import type { HookRow, HookTaskRow } from '../db/schema'
import { deliveryBody, eventName, HOOK_EVENT_TYPES, type EventMode, type HookEventType } from '../lib/hook-events'
import { isoTime } from '../lib/time'

/** The event types a `choose_events` hook took, as stored (a JSON list). */
export const eventsOfHook = (hook: HookRow): string[] => JSON.parse(hook.events) as string[]

const SLACK_KEYS = ['channel', 'username', 'icon_url', 'color'] as const

/**
 * The Hook record: `config` without the secret (a site hook's also says `is_system_webhook`, as it
 * is given, so that the site's list tells system hooks from default ones); `events` as the hook
 * takes them.
 */
export function hookToApi(hook: HookRow) {
  const meta = JSON.parse(hook.meta) as Record<string, string>
  const config: Record<string, string> = { url: hook.url, content_type: hook.contentType }
  if (hook.type === 'slack') for (const key of SLACK_KEYS) config[key] = meta[key] ?? ''
  if (hook.repoId === null && hook.ownerId === null) config.is_system_webhook = String(hook.isSystem)
  const mode = hook.eventMode as EventMode
  return {
    id: hook.id,
    type: hook.type,
    config,
    events: mode === 'send_everything' ? [...HOOK_EVENT_TYPES] : mode === 'push_only' ? ['push'] : eventsOfHook(hook),
    active: hook.isActive,
    branch_filter: hook.branchFilter,
    updated_at: isoTime(hook.updatedUnix),
    created_at: isoTime(hook.createdUnix),
  }
}

const parsed = <T>(text: string): T | null => {
  if (!text) return null
  try {
    return JSON.parse(text) as T
  } catch {
    return null
  }
}

/** The HookDelivery record: the task, with the request as sent (headers of its last attempt) and the answer. */
export function deliveryToApi(hook: HookRow, task: HookTaskRow) {
  const request = parsed<{ url: string; http_method: string; headers: Record<string, string> }>(task.requestContent)
  const response = parsed<{ status: number; headers: Record<string, string>; body: string }>(task.responseContent)
  return {
    id: task.id,
    uuid: task.uuid,
    event: eventName(task.eventType as HookEventType),
    event_type: task.eventType,
    delivered: task.isDelivered,
    success: task.isSucceed,
    attempts: task.attempts,
    status_code: response?.status ?? 0,
    duration_ms: task.durationMs,
    delivered_at: task.deliveredMs ? isoTime(Math.floor(task.deliveredMs / 1000)) : null,
    next_attempt_at: !task.isDelivered && task.nextAttemptMs ? isoTime(Math.floor(task.nextAttemptMs / 1000)) : null,
    created_at: isoTime(task.createdUnix),
    request: {
      url: request?.url ?? hook.url,
      http_method: request?.http_method ?? 'POST',
      headers: request?.headers ?? {},
      body: deliveryBody({ payload: task.payload, contentType: hook.contentType }),
    },
    response,
  }
}
