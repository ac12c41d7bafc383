/**
 * A queue per key: `run(scope, key, fn)` starts `fn` once every earlier `fn` of the same scope
 * and key has settled (whether it succeeded or not), so work on one thing (a repository's sync, a
 * pull request's check) never overlaps itself. Each call of `oneAtATime()` is its own namespace;
 * scopes (a database) are held weakly.
 */
export function oneAtATime<K>() {
  const queues = new WeakMap<object, Map<K, Promise<unknown>>>()
  return <T>(scope: object, key: K, fn: () => Promise<T>): Promise<T> => {
    let map = queues.get(scope)
    if (!map) queues.set(scope, (map = new Map()))
    const run = (map.get(key) ?? Promise.resolve()).then(fn, fn)
    const tail = run.catch(() => {})
    map.set(key, tail)
    tail.then(() => {
      if (map.get(key) === tail) map.delete(key)
    })
    return run
  }
}
