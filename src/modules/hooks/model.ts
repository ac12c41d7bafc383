import { t } from 'elysia'
import { Int } from '../users/model'
import { pageQueryFields } from '../../lib/pagination'
import { MAX_LIST_ITEMS } from '../../lib/validate'
import { recordLiterals } from '../../lib/literals'
import { ACCEPTED_EVENT_NAMES, HOOK_EVENT_TYPES, HOOK_TYPES } from '../../webhooks/events'
import { MAX_BRANCH_FILTER } from '../../lib/glob'

/** Longest value of a `config` key (URLs included) and of a secret or authorization header. */
export const MAX_CONFIG_VALUE = 2048
const MAX_CONFIG_KEYS = 16

/** The Hook record; `secret` and `authorization_header` are never part of it. */
export const HookSchema = t.Object(
  {
    id: Int(),
    type: recordLiterals(HOOK_TYPES),
    config: t.Record(t.String(), t.String(), { description: 'url, content_type; for slack also channel, username, icon_url, color' }),
    events: t.Array(t.String(), { description: 'the event types the hook takes' }),
    active: t.Boolean(),
    branch_filter: t.String(),
    updated_at: t.String(),
    created_at: t.String(),
  },
  { $id: '#/components/schemas/Hook' },
)

const Config = t.Record(t.String({ maxLength: 64 }), t.String({ maxLength: MAX_CONFIG_VALUE }), {
  maxProperties: MAX_CONFIG_KEYS,
  description: 'url and content_type (json | form) required; secret; for slack channel (required), username, icon_url, color; for site hooks is_system_webhook (a Go boolean: true, false, 1, 0, t, f)',
})
const Events = t.Array(t.String({ maxLength: 64 }), {
  maxItems: MAX_LIST_ITEMS,
  description: `event names: ${ACCEPTED_EVENT_NAMES.join(', ')}; absent or empty: push`,
})
const modeFields = {
  push_only: t.Optional(t.Boolean({ description: 'take push events only (Gitea HookEvent.push_only)' })),
  send_everything: t.Optional(t.Boolean({ description: 'take every event (Gitea HookEvent.send_everything)' })),
  choose_events: t.Optional(t.Boolean({ description: 'take the events listed in `events` (the default)' })),
  branch_filter: t.Optional(t.String({ maxLength: MAX_BRANCH_FILTER, description: 'glob of the branches whose push, create and delete events are sent; empty or * = all' })),
  authorization_header: t.Optional(t.String({ maxLength: MAX_CONFIG_VALUE, description: 'sent as Authorization with each delivery; never returned' })),
  is_system_webhook: t.Optional(
    t.Boolean({ description: "site hooks (/admin/hooks) only: true a system hook (every repository's events), false a default hook (copied into each new repository); also read from config.is_system_webhook, Gitea 1.23's spelling" }),
  ),
}

export const CreateHookOption = t.Object(
  {
    type: t.String({ maxLength: 32, description: HOOK_TYPES.join(' | ') }),
    config: Config,
    events: t.Optional(Events),
    active: t.Optional(t.Boolean({ description: 'false when absent: the hook never fires until activated' })),
    ...modeFields,
  },
  { $id: '#/components/schemas/CreateHookOption' },
)

export const EditHookOption = t.Object(
  {
    config: t.Optional(Config),
    events: t.Optional(Events),
    active: t.Optional(t.Boolean()),
    ...modeFields,
  },
  { $id: '#/components/schemas/EditHookOption' },
)

/** One recorded delivery of a hook (a hook task): what was sent, what came back. */
export const HookDeliverySchema = t.Object(
  {
    id: Int(),
    /** The delivery id (X-Gitea-Delivery). */
    uuid: t.String(),
    event: t.String({ description: 'X-Gitea-Event' }),
    event_type: recordLiterals(HOOK_EVENT_TYPES, { description: 'X-Gitea-Event-Type' }),
    delivered: t.Boolean({ description: 'no attempt is pending any more' }),
    success: t.Boolean({ description: 'the receiver answered 2xx' }),
    attempts: Int(),
    /** HTTP status of the last attempt; 0 when none was received. */
    status_code: Int(),
    duration_ms: Int(),
    delivered_at: t.Nullable(t.String()),
    next_attempt_at: t.Nullable(t.String()),
    created_at: t.String(),
    request: t.Object({ url: t.String(), http_method: t.String(), headers: t.Record(t.String(), t.String()), body: t.String() }),
    response: t.Nullable(t.Object({ status: Int(), headers: t.Record(t.String(), t.String()), body: t.String() })),
  },
  { $id: '#/components/schemas/HookDelivery' },
)

export const RepoHookParams = t.Object({ owner: t.String(), repo: t.String(), id: t.String() })
export const RepoHookDeliveryParams = t.Object({ owner: t.String(), repo: t.String(), id: t.String(), delivery: t.String() })
export const OrgHookParams = t.Object({ org: t.String(), id: t.String() })
export const OrgHookDeliveryParams = t.Object({ org: t.String(), id: t.String(), delivery: t.String() })
/** `/admin/hooks/{id}`, `/user/hooks/{id}`. */
export const HookIdParams = t.Object({ id: t.String() })
export const HookListQuery = t.Object(pageQueryFields)
