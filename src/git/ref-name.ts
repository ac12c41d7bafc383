/**
 * Whether a name taken from a URL may be used as a ref name (`refs/heads/` + it): git
 * check-ref-format's rules, never starting with '-', '.' or '/' (`refs/heads/` + `/x` is no ref
 * git would make), no whitespace or control characters, at most 255 characters. Here, below
 * refs.ts and objects.ts, which both check names with it.
 */
const SAFE_REF =
  /^(?![-./])(?!.*\.\.)(?!.*\/\/)(?!.*\/[.])(?!.*@\{)(?!.*\.lock(?:\/|$))(?!.*[/.]$)[^\x00-\x20~^:?*[\\\x7f]{1,255}$/

export const isSafeRefName = (name: string): boolean => name !== '@' && SAFE_REF.test(name)
