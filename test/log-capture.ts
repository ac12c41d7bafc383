/** What the process writes to stdout and stderr while `fn` runs (the log's lines). */
export async function logOutput(fn: () => Promise<void>, until: (out: string) => boolean): Promise<string> {
  let out = ''
  const writes = [process.stdout, process.stderr].map((stream) => {
    const write = stream.write.bind(stream)
    stream.write = ((chunk: string | Uint8Array, ...rest: any[]) => {
      out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
      return write(chunk, ...rest)
    }) as typeof stream.write
    return () => {
      stream.write = write
    }
  })
  // console.warn and console.error write to stderr without going through process.stderr.write.
  for (const method of ['warn', 'error'] as const) {
    const original = console[method]
    console[method] = (...args: unknown[]) => {
      out += args.map(String).join(' ') + '\n'
    }
    writes.push(() => {
      console[method] = original
    })
  }
  try {
    await fn()
    // Request lines are written once the caller is known, just after the answer.
    for (let i = 0; i < 200 && !until(out); i++) await Bun.sleep(10)
  } finally {
    for (const restoreWrite of writes) restoreWrite()
  }
  return out
}
