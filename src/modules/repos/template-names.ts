/**
 * The one way to the repository templates (`./templates`: .gitignore files, licenses, READMEs,
 * label sets): imported by the first caller that needs them, never at start
 * (test/lazy-load.test.ts), and looked up by name without regard to case, as Gitea does.
 */
export const repoTemplates = () => import('./templates')

/** Case-insensitive template lookup: the template's own name and its value; undefined when there is none. */
export function findTemplate<V>(templates: Record<string, V>, name: string): [string, V] | undefined {
  const lower = name.toLowerCase()
  for (const key in templates) if (key.toLowerCase() === lower) return [key, templates[key]!]
  return undefined
}
