/**
 * Issue templates as Gitea reads them (modules/issue/template): Markdown with YAML front matter,
 * or YAML issue forms, into IssueTemplate records; and the template chooser's config file.
 */

export interface IssueFormField {
  type: string
  id: string
  attributes: Record<string, unknown>
  validations: Record<string, unknown>
  visible: string[]
}

export interface IssueTemplate {
  name: string
  title: string
  about: string
  labels: string[]
  assignees: string[]
  ref: string
  body: IssueFormField[] | null
  content: string
  file_name: string
}

export interface IssueConfig {
  blank_issues_enabled: boolean
  contact_links: { name: string; url: string; about: string }[]
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Gitea's IssueTemplateStringSlice: a list of strings, or one comma-separated string. */
function stringList(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return []
  const items = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : null
  if (!items || items.some((i) => typeof i !== 'string' && typeof i !== 'number')) throw new Error(`${field} must be a list of strings or a comma-separated string`)
  return items.map((i) => String(i).trim()).filter(Boolean)
}

const text = (value: unknown, field: string): string => {
  if (value === undefined || value === null) return ''
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value)
  throw new Error(`${field} must be a string`)
}

function yamlObject(source: string): Record<string, unknown> {
  const parsed = source.trim() === '' ? {} : Bun.YAML.parse(source)
  if (!isObject(parsed)) throw new Error('yaml unmarshal: not a mapping')
  return parsed
}

/** The kind of template a file name is (Gitea's IssueTemplate.Type): config files are none. */
export function templateKind(path: string): 'md' | 'yaml' | null {
  const base = path.slice(path.lastIndexOf('/') + 1)
  if (base === 'config.yaml' || base === 'config.yml') return null
  if (base.endsWith('.md')) return 'md'
  if (base.endsWith('.yaml') || base.endsWith('.yml')) return 'yaml'
  return null
}

const isSeparator = (line: string | undefined) => line !== undefined && /^-{3,}\s*$/.test(line.replace(/\r$/, ''))

/** Front matter and body of a Markdown template; the front matter must open the file (Gitea's ExtractMetadata). */
function frontMatter(source: string): { front: string; body: string } {
  const lines = source.split('\n')
  if (!isSeparator(lines[0])) throw new Error('frontmatter must start with a separator line')
  const end = lines.findIndex((l, i) => i > 0 && isSeparator(l))
  if (end < 0) throw new Error('frontmatter must end with a separator line')
  return { front: lines.slice(1, end).join('\n'), body: lines.slice(end + 1).join('\n') }
}

function formFields(value: unknown): IssueFormField[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) throw new Error('body must be a list of fields')
  return value.map((f, i) => {
    if (!isObject(f)) throw new Error(`body[${i}] must be a mapping`)
    const map = (v: unknown, name: string) => {
      if (v === undefined || v === null) return {}
      if (!isObject(v)) throw new Error(`body[${i}].${name} must be a mapping`)
      return v
    }
    return {
      type: text(f.type, `body[${i}].type`),
      // Gitea numbers a field without an id by its position.
      id: text(f.id, `body[${i}].id`) || String(i),
      attributes: map(f.attributes, 'attributes'),
      validations: map(f.validations, 'validations'),
      visible: stringList(f.visible, `body[${i}].visible`),
    }
  })
}

/** One template file as Gitea's IssueTemplate record; throws what makes it invalid. */
export function parseTemplate(path: string, source: string): IssueTemplate {
  const kind = templateKind(path)
  if (kind !== 'md') return templateOf(path, kind, yamlObject(source), '')
  try {
    const { front, body } = frontMatter(source)
    return templateOf(path, kind, yamlObject(front), body)
  } catch {
    // Gitea 1.23 takes a Markdown file whose front matter is missing or unreadable (a pull
    // request template, a single issue template) as all content, named by its file, about its
    // first 80 characters.
    const about = [...source.replace(/\s+/g, ' ').trim()]
    return {
      name: path.slice(path.lastIndexOf('/') + 1),
      title: '',
      about: about.length > 80 ? about.slice(0, 79).join('') + '…' : about.join(''),
      labels: [],
      assignees: [],
      ref: 'refs/heads/',
      body: null,
      content: source,
      file_name: path,
    }
  }
}

function templateOf(path: string, kind: 'md' | 'yaml' | null, meta: Record<string, unknown>, content: string): IssueTemplate {
  let ref = text(meta.ref, 'ref')
  // Gitea takes a ref without `refs/` for a branch (tags are written refs/tags/...).
  if (!ref.startsWith('refs/')) ref = `refs/heads/${ref}`
  return {
    name: text(meta.name, 'name'),
    title: text(meta.title, 'title'),
    // Issue forms may say `description` for `about` (as GitHub's do).
    about: text(meta.about, 'about') || (kind === 'yaml' ? text(meta.description, 'description') : ''),
    labels: stringList(meta.labels, 'labels'),
    assignees: stringList(meta.assignees, 'assignees'),
    ref,
    body: kind === 'yaml' ? formFields(meta.body) : null,
    content,
    file_name: path,
  }
}

export const defaultIssueConfig = (): IssueConfig => ({ blank_issues_enabled: true, contact_links: [] })

/** The chooser's config file (Gitea's GetTemplateConfig): every contact link needs name, url and about, the url absolute. */
export function parseIssueConfig(source: string): IssueConfig {
  const meta = yamlObject(source)
  const config = defaultIssueConfig()
  if (meta.blank_issues_enabled !== undefined) {
    if (typeof meta.blank_issues_enabled !== 'boolean') throw new Error('blank_issues_enabled must be true or false')
    config.blank_issues_enabled = meta.blank_issues_enabled
  }
  const links = meta.contact_links ?? []
  if (!Array.isArray(links)) throw new Error('contact_links must be a list')
  links.forEach((link, i) => {
    const at = `contact_link at position ${i + 1}`
    if (!isObject(link)) throw new Error(`${at} must be a mapping`)
    const [name, url, about] = [text(link.name, 'name'), text(link.url, 'url'), text(link.about, 'about')]
    if (!name) throw new Error(`${at} is missing name key`)
    if (!url) throw new Error(`${at} is missing url key`)
    if (!about) throw new Error(`${at} is missing about key`)
    if (!URL.canParse(url)) throw new Error(`${url} is not a valid URL`)
    config.contact_links.push({ name, url, about })
  })
  return config
}
