/**
 * A byte stream passed on until `maxBytes` have gone through; past that it ends with an error
 * (the client's transfer breaks off) and the source is cancelled, so an answer too large to serve
 * is never taken for a whole one and never costs more than the bound.
 */
export function capStream(body: ReadableStream<Uint8Array>, maxBytes: number, what: string): ReadableStream<Uint8Array> {
  let sent = 0
  const reader = body.getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await reader.read()
      if (next.done) return controller.close()
      sent += next.value.length
      if (sent > maxBytes) {
        reader.cancel().catch(() => {})
        return controller.error(new Error(`${what} is larger than ${maxBytes} bytes`))
      }
      controller.enqueue(next.value)
    },
    cancel() {
      reader.cancel().catch(() => {})
    },
  })
}
