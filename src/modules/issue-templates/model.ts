import { t } from 'elysia'

const IssueFormFieldSchema = t.Object(
  {
    type: t.String(),
    id: t.String(),
    attributes: t.Record(t.String(), t.Unknown()),
    validations: t.Record(t.String(), t.Unknown()),
    visible: t.Array(t.String()),
  },
  { $id: '#/components/schemas/IssueFormField' },
)

/** IssueTemplate record (`body`: an issue form's fields; null for a Markdown template). */
export const IssueTemplateSchema = t.Object(
  {
    name: t.String(),
    title: t.String(),
    about: t.String(),
    labels: t.Array(t.String()),
    assignees: t.Array(t.String()),
    ref: t.String(),
    body: t.Nullable(t.Array(IssueFormFieldSchema)),
    content: t.String(),
    file_name: t.String(),
  },
  { $id: '#/components/schemas/IssueTemplate' },
)

export const IssueConfigSchema = t.Object(
  {
    blank_issues_enabled: t.Boolean(),
    contact_links: t.Array(t.Object({ name: t.String(), url: t.String(), about: t.String() }, { $id: '#/components/schemas/IssueConfigContactLink' })),
  },
  { $id: '#/components/schemas/IssueConfig' },
)

export const IssueConfigValidationSchema = t.Object({ valid: t.Boolean(), message: t.String() }, { $id: '#/components/schemas/IssueConfigValidation' })
