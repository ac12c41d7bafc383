/**
 * Branch protection's cost: a push to a protected branch and a gated merge, each beside the
 * same on a repository without protection.
 *
 * Two repositories with the same history (git fast-import: main, and one branch per pull
 * request), in a Warren started in this process:
 *   - `open`: no protection;
 *   - `guarded`: main protected by a push whitelist (the pusher in it), required status checks
 *     (`ci/*`), protected file patterns (`secret/**;*.pem`, which the pushes do not touch, so the
 *     judge reads every pushed change and lets it through) and 1 required approval.
 * Pushes: ROUNDS commits on main, each pushed over HTTP by the real git client to both
 * repositories (the order alternating), `git push` timed end to end.
 * Merges: ROUNDS pull requests opened on both, each given a `ci/build` success and an approval
 * by a collaborator on both (so the only difference is the gate that reads them), then
 * POST …/merge timed on each (alternating). Before the first, the guarded merge is checked to be
 * refused (405) without its status and approval, so the gate is known to be on.
 * Prints p50/p95 of each and the ratio protected ÷ unprotected; target (PERFORMANCE.md): ≤ 10%
 * over the same without protection.
 * On SQLite, or on a fresh PostgreSQL database when WARREN_DATABASE_URL is set (lib/database.ts).
 *
 *   bun bench/protection.ts [rounds=30]
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { createRepository } from '../src/modules/repos/create'
import { clientEnv, runClient } from './lib/git'
import { analyze } from './lib/database'
import { inProcessWarren } from './lib/in-process'
import { latencyText, loadAverages, percentile, ratioText } from './lib/latency'

const ROUNDS = Number(process.argv[2] ?? 30)
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`rounds must be a positive integer, got "${process.argv[2]}"`)
const TARGET = 1.1

const warren = await inProcessWarren('protection')
const { tmp, database, deps, server, base } = warren

try {
  console.log(`database: ${database.label}; ${await loadAverages()}`)
  const dev = await createUser(deps, { username: 'dev', password: 'bench-password', email: 'dev@example.com' })
  const rev = await createUser(deps, { username: 'rev', password: 'bench-password', email: 'rev@example.com' })
  const devToken = (await createAccessToken(deps, dev.id, 'bench')).secret
  const revToken = (await createAccessToken(deps, rev.id, 'bench')).secret
  const call = async (token: string, method: string, path: string, body?: unknown, expected = [200, 201, 204]) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (!expected.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
  const REPOS = ['open', 'guarded'] as const
  for (const name of REPOS) {
    await createRepository(deps, dev, { name })
    await call(devToken, 'PUT', `/repos/dev/${name}/collaborators/rev`, { permission: 'write' })
  }

  // One history for both: main (a few files, a protected one among them) and a branch per pull request.
  const work = join(tmp, 'work')
  const env = clientEnv(tmp)
  const git = (...args: string[]) => runClient(work, env, ['git', ...args])
  await runClient(tmp, env, ['git', 'init', '-q', '--initial-branch=main', work])
  const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`
  let stream = `commit refs/heads/main\nmark :1\ncommitter Bench <bench@example.com> 1600000000 +0000\n${data('start')}`
  stream += `M 100644 inline README.md\n${data('# Bench\n')}M 100644 inline secret/key.pem\n${data('not a key\n')}\n`
  for (let i = 0; i < ROUNDS; i++)
    stream += `commit refs/heads/pr-${i}\ncommitter Bench <bench@example.com> ${1600000001 + i} +0000\n${data(`change ${i}`)}from :1\nM 100644 inline changes/pr-${i}.txt\n${data(`${i}\n`)}\n`
  const fi = Bun.spawn(['git', 'fast-import', '--quiet'], { cwd: work, env, stdin: 'pipe', stdout: 'ignore', stderr: 'inherit' })
  fi.stdin.write(stream)
  await fi.stdin.end()
  if ((await fi.exited) !== 0) throw new Error('fast-import failed')
  await git('checkout', '-q', 'main')
  const remote = (name: string) => `http://dev:bench-password@127.0.0.1:${server.port}/dev/${name}.git`
  for (const name of REPOS) await git('push', '-q', remote(name), '--all')
  // main is protected once it exists (a rule names an existing branch).
  await call(devToken, 'POST', '/repos/dev/guarded/branch_protections', {
    rule_name: 'main',
    enable_push: true,
    enable_push_whitelist: true,
    push_whitelist_usernames: ['dev'],
    enable_status_check: true,
    status_check_contexts: ['ci/*'],
    protected_file_patterns: 'secret/**;*.pem',
    required_approvals: 1,
  })
  await analyze(deps.db)

  // ---- pushes
  const pushes: Record<string, number[]> = { open: [], guarded: [] }
  for (let i = 0; i < 3 + ROUNDS; i++) {
    writeFileSync(join(work, `push-${i}.txt`), `push ${i}\n`)
    await git('add', '-A')
    await git('commit', '-q', '-m', `push ${i}`)
    for (const name of i % 2 ? [...REPOS].reverse() : REPOS) {
      const ms = await git('push', '-q', remote(name), 'main')
      if (i >= 3) pushes[name]!.push(ms) // the first three warm both paths up
    }
  }
  console.log(`git push over HTTP of one commit to main, ${ROUNDS} each (alternating):`)
  console.log(`  unprotected   ${latencyText(pushes.open!)}`)
  console.log(`  protected     ${latencyText(pushes.guarded!)}`)
  console.log(`  protected ÷ unprotected p50 ${ratioText(percentile(pushes.guarded!, 50), percentile(pushes.open!, 50), TARGET)}, p95 ${(percentile(pushes.guarded!, 95) / percentile(pushes.open!, 95)).toFixed(2)}×`)
  // Where the difference goes: git runs the pre-receive hook (src/push/hook.ts, a few lines of sh)
  // for every push; for a protected branch it hands the quarantine to the server, which judges it
  // (one git command, `log -1`, for a commit on top of the branch). The hook alone, with nothing to judge, costs:
  const hookStarts: number[] = []
  const hook = join(deps.config.dataDir, 'hooks', 'channel-2', 'pre-receive')
  for (let i = 0; i < 10; i++) hookStarts.push(await runClient(tmp, { ...env, WARREN_PUSH_CHECKS: '' }, [hook]))
  console.log(`  of which the hook's own process start (sh, judging nothing): ${latencyText(hookStarts)}`)

  // ---- gated merges
  const merges: Record<string, number[]> = { open: [], guarded: [] }
  for (let i = 0; i < ROUNDS; i++) {
    const numbers: Record<string, number> = {}
    for (const name of REPOS) {
      const pr = (await call(devToken, 'POST', `/repos/dev/${name}/pulls`, { head: `pr-${i}`, base: 'main', title: `Change ${i}` })).body
      numbers[name] = pr.number
      if (name === 'guarded' && i === 0) {
        const refused = await call(devToken, 'POST', `/repos/dev/guarded/pulls/${pr.number}/merge`, { Do: 'merge' }, [405])
        if (refused.status !== 405) throw new Error('the gate did not refuse a merge without its status and approval')
      }
      await call(devToken, 'POST', `/repos/dev/${name}/statuses/${pr.head.sha}`, { state: 'success', context: 'ci/build', target_url: 'https://ci.example.com/1' })
      await call(revToken, 'POST', `/repos/dev/${name}/pulls/${pr.number}/reviews`, { event: 'APPROVED', body: 'Looks good.' })
    }
    for (const name of i % 2 ? [...REPOS].reverse() : REPOS) {
      const started = performance.now()
      await call(devToken, 'POST', `/repos/dev/${name}/pulls/${numbers[name]}/merge`, { Do: 'merge' }, [200])
      merges[name]!.push(performance.now() - started)
    }
  }
  console.log(`POST …/merge (merge commit), ${ROUNDS} each (alternating); both with a ci/build success and an approval:`)
  console.log(`  unprotected   ${latencyText(merges.open!)}`)
  console.log(`  gated         ${latencyText(merges.guarded!)}  (1 approval and ci/* required)`)
  console.log(`  gated ÷ unprotected p50 ${ratioText(percentile(merges.guarded!, 50), percentile(merges.open!, 50), TARGET)}, p95 ${(percentile(merges.guarded!, 95) / percentile(merges.open!, 95)).toFixed(2)}×`)
  console.log(`target (PERFORMANCE.md): push to a protected branch, gated merge ≤ 10% over the same without protection; ${await loadAverages()}`)
} finally {
  await warren.close()
}
