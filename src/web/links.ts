/** The web's own URLs (Gitea's), each path segment encoded. */
const seg = (s: string) => encodeURIComponent(s)
const segs = (path: readonly string[]) => path.map(seg).join('/')

export const ownerUrl = (owner: string) => `/${seg(owner)}`
export const repoUrl = (owner: string, repo: string) => `/${seg(owner)}/${seg(repo)}`
/** `src/{kind}/{ref}/{path}`: a ref with slashes keeps them (the longest matching ref wins). */
export const srcUrl = (owner: string, repo: string, kind: string, ref: string, path: readonly string[] = []) =>
  `${repoUrl(owner, repo)}/src/${kind}/${segs(ref.split('/'))}${path.length ? '/' + segs(path) : ''}`
export const rawUrl = (owner: string, repo: string, kind: string, ref: string, path: readonly string[]) =>
  `${repoUrl(owner, repo)}/raw/${kind}/${segs(ref.split('/'))}/${segs(path)}`
/** A file through `media/` (the LFS object its pointer stands for, else the file). */
export const mediaUrl = (owner: string, repo: string, kind: string, ref: string, path: readonly string[]) =>
  `${repoUrl(owner, repo)}/media/${kind}/${segs(ref.split('/'))}/${segs(path)}`
/** A path's history (`commits/{kind}/{ref}/{path}`): the commits that touched it. */
export const historyUrl = (owner: string, repo: string, kind: string, ref: string, path: readonly string[]) =>
  `${repoUrl(owner, repo)}/commits/${kind}/${segs(ref.split('/'))}${path.length ? '/' + segs(path) : ''}`
/** Gitea's blame page of a file. */
export const blameUrl = (owner: string, repo: string, kind: string, ref: string, path: readonly string[]) =>
  `${repoUrl(owner, repo)}/blame/${kind}/${segs(ref.split('/'))}/${segs(path)}`
/** Gitea's "Go to file" at a ref (`find/{kind}/{ref}`, with `q` when given). */
export const findUrl = (owner: string, repo: string, kind: string, ref: string, q?: string) =>
  `${repoUrl(owner, repo)}/find/${kind}/${segs(ref.split('/'))}${q ? `?q=${encodeURIComponent(q)}` : ''}`
/** Gitea's explore link of a topic: the repositories carrying it. */
export const topicSearchUrl = (topic: string) => `/explore/repos?q=${encodeURIComponent(topic)}&topic=1`
/** Gitea's code search of a repository (`search?q=`), at its default branch. */
export const searchUrl = (owner: string, repo: string, q?: string) => `${repoUrl(owner, repo)}/search${q ? `?q=${encodeURIComponent(q)}` : ''}`
/** A ref's name as path segments (its slashes kept, each segment encoded). */
export const refPath = (name: string) => segs(name.split('/'))
/** Gitea's cherry-pick (or, `revert`, revert) page of a commit onto a branch. */
export const cherryPickUrl = (owner: string, repo: string, sha: string, branch: string, revert = false) =>
  `${repoUrl(owner, repo)}/_cherrypick/${seg(sha)}/${refPath(branch)}${revert ? '?cherry-pick-type=revert' : ''}`
/** The web editor's pages (Gitea's): `_new`, `_edit`, `_delete`, `_upload`, `_preview`, then the branch and the path. */
export const editorUrl = (owner: string, repo: string, action: '_new' | '_edit' | '_delete' | '_upload' | '_preview', branch: string, path: readonly string[] = []) =>
  `${repoUrl(owner, repo)}/${action}/${segs(branch.split('/'))}${path.length ? '/' + segs(path) : ''}`

/** The sign-in page, coming back to `path` (a local path) once signed in. */
export const signInUrl = (path: string) => `/user/login?redirect_to=${encodeURIComponent(path)}`

/** A holder's projects: a repository's (`/{o}/{r}/projects`) or, with `repo` null, an owner's (`/{owner}/-/projects`). */
export const projectsUrl = (owner: string, repo: string | null) => (repo === null ? `${ownerUrl(owner)}/-/projects` : `${repoUrl(owner, repo)}/projects`)
/** A project's board, from a repository whose owner holds it or which holds it itself. */
export const projectUrl = (owner: string, repo: string, project: { id: number; repoId: number | null }) => `${projectsUrl(owner, project.repoId === null ? null : repo)}/${project.id}`
