import pkg from '../package.json'

/** Warren's own version. */
export const WARREN_VERSION: string = pkg.version

/**
 * What `/version` reports: a Gitea version matching the API Warren implements, so clients that
 * compare versions (the modern go-sdk does) enable the right features.
 */
export const GITEA_COMPAT_VERSION = `1.9.0+warren-${WARREN_VERSION}`
