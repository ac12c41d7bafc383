import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import { toApiUser } from '../../convert/user'
import { notFound } from '../../lib/errors'
import { PageQuery } from '../../lib/pagination'
import { OrgParams } from '../orgs/model'
import { UserSchema } from '../users/model'
import { BlockQuery, OrgBlockParams, UserBlockParams } from './model'
import { blockPathUser, blockUser, listBlocks, unblockUser } from './service'

const UserList = t.Array(UserSchema)
const NoContent = { 204: t.Void() }

/**
 * Blocks (Gitea 1.23's routers/api/v1/{user,org}/block.go and shared/block.go): the caller's own
 * under `/user/blocks`, an organisation's under `/orgs/{org}/blocks` for its owners. A check
 * answers 204 when blocked, 404 when not; blocking and unblocking answer 204, 400 when refused.
 */
export const blocksModule = (deps: AppDeps, api: AreaApp) => {
  const usersAs = (viewer: UserRow) => (rows: UserRow[]) => rows.map((u) => toApiUser(deps.config, u, viewer))
  const check = async (doer: UserRow, blocker: UserRow, name: string) => {
    if (!(await blockPathUser(deps, doer, blocker, name)).blocked) throw notFound(`${name} is not blocked`)
  }
  const block = async (doer: UserRow, blocker: UserRow, name: string, note: string | undefined) =>
    await blockUser(deps, doer, blocker, (await blockPathUser(deps, doer, blocker, name)).user, note ?? '')
  const unblock = async (doer: UserRow, blocker: UserRow, name: string) => await unblockUser(deps, doer, blocker, (await blockPathUser(deps, doer, blocker, name)).user)

  const byUser = { scope: 'user', signed: true, detail: { tags: ['user'] } } as const
  const byOrgOwner = { scope: 'organization', signed: true, org: 'owner', detail: { tags: ['organization'] } } as const
  const detail = (of: { detail: { tags: readonly string[] } }, operationId: string, summary: string) => ({ detail: { tags: [...of.detail.tags], operationId, summary } })

  return area(api)
    .get('/user/blocks', async ({ user, page, respond }) => respond(await listBlocks(deps, user, user, page), usersAs(user)), {
      ...byUser,
      paged: true,
      query: PageQuery,
      response: { 200: UserList },
      ...detail(byUser, 'userListBlocks', 'List users blocked by the authenticated user'),
    })
    .get('/user/blocks/:username', async ({ user, params, status }) => status(204, await check(user, user, params.username)), {
      ...byUser,
      params: UserBlockParams,
      response: NoContent,
      ...detail(byUser, 'userCheckUserBlock', 'Check if a user is blocked by the authenticated user'),
    })
    .put('/user/blocks/:username', async ({ user, params, query, status }) => status(204, await block(user, user, params.username, query.note)), {
      ...byUser,
      params: UserBlockParams,
      query: BlockQuery,
      response: NoContent,
      ...detail(byUser, 'userBlockUser', 'Block a user'),
    })
    .delete('/user/blocks/:username', async ({ user, params, status }) => status(204, await unblock(user, user, params.username)), {
      ...byUser,
      params: UserBlockParams,
      response: NoContent,
      ...detail(byUser, 'userUnblockUser', 'Unblock a user'),
    })
    .get('/orgs/:org/blocks', async ({ user, org, page, respond }) => respond(await listBlocks(deps, user, org.org, page), usersAs(user)), {
      ...byOrgOwner,
      paged: true,
      params: OrgParams,
      query: PageQuery,
      response: { 200: UserList },
      ...detail(byOrgOwner, 'organizationListBlocks', 'List users blocked by the organization'),
    })
    .get('/orgs/:org/blocks/:username', async ({ user, org, params, status }) => status(204, await check(user, org.org, params.username)), {
      ...byOrgOwner,
      params: OrgBlockParams,
      response: NoContent,
      ...detail(byOrgOwner, 'organizationCheckUserBlock', 'Check if a user is blocked by the organization'),
    })
    .put('/orgs/:org/blocks/:username', async ({ user, org, params, query, status }) => status(204, await block(user, org.org, params.username, query.note)), {
      ...byOrgOwner,
      params: OrgBlockParams,
      query: BlockQuery,
      response: NoContent,
      ...detail(byOrgOwner, 'organizationBlockUser', 'Block a user'),
    })
    .delete('/orgs/:org/blocks/:username', async ({ user, org, params, status }) => status(204, await unblock(user, org.org, params.username)), {
      ...byOrgOwner,
      params: OrgBlockParams,
      response: NoContent,
      ...detail(byOrgOwner, 'organizationUnblockUser', 'Unblock a user'),
    })
}
