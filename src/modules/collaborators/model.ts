import { t } from 'elysia'

export const CollaboratorParams = t.Object({ owner: t.String(), repo: t.String(), collaborator: t.String() })

/** AddCollaboratorOption (options.md §3); the body may be empty. */
export const AddCollaboratorOption = t.Object({
  permission: t.Optional(t.String({ description: 'read, write or admin (default write)' })),
})
