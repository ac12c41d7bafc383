import { t } from 'elysia'

/** Longest markdown text accepted (the render pool checks it again before posting). */
export const MAX_MARKDOWN_TEXT = 1024 * 1024
const MAX_TEXT = MAX_MARKDOWN_TEXT

/**
 * MarkdownOption. Gitea's struct has no JSON tags, so Go matches keys
 * case-insensitively: both the documented capitalised keys and their lower-case form are read.
 */
export const MarkdownOption = t.Object(
  {
    Text: t.Optional(t.String({ maxLength: MAX_TEXT, description: 'Text to render' })),
    Mode: t.Optional(t.String({ maxLength: 32, description: 'Mode to render (gfm or markdown)' })),
    Context: t.Optional(t.String({ maxLength: 2048, description: 'Context to render' })),
    Wiki: t.Optional(t.Boolean({ description: 'Is it a wiki page?' })),
    text: t.Optional(t.String({ maxLength: MAX_TEXT })),
    mode: t.Optional(t.String({ maxLength: 32 })),
    context: t.Optional(t.String({ maxLength: 2048 })),
    wiki: t.Optional(t.Boolean()),
  },
  { $id: '#/components/schemas/MarkdownOption' },
)

/** MarkupOption: MarkdownOption with the path of a previewed file (`FilePath`; its keys are read as MarkdownOption's are). */
export const MarkupOption = t.Object(
  {
    ...MarkdownOption.properties,
    FilePath: t.Optional(t.String({ maxLength: 4096, description: 'File path for detecting extension in file mode' })),
    filepath: t.Optional(t.String({ maxLength: 4096 })),
  },
  { $id: '#/components/schemas/MarkupOption' },
)

/** The modes /markup knows (Gitea answers any other with 422); `file` renders markdown, as Gitea's API does without a repository. */
export const MARKUP_MODES = ['', 'markdown', 'gfm', 'comment', 'wiki', 'file'] as const

/** The raw variant's body: any text, read as it is. */
export const MarkdownRawBody = t.String({ maxLength: MAX_TEXT, description: 'Request body to render' })

/** MarkdownRender: an HTML fragment. */
export const MarkdownRender = t.String({ description: 'Rendered HTML' })
