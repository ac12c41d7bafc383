/** Reads the SSH wire format (RFC 4251): uint32 length-prefixed strings; throws a plain Error when truncated. */
export class WireReader {
  private offset = 0
  constructor(private readonly buf: Buffer) {}
  string(): Buffer {
    if (this.offset + 4 > this.buf.length) throw new Error('truncated key blob')
    const length = this.buf.readUInt32BE(this.offset)
    const start = this.offset + 4
    if (start + length > this.buf.length) throw new Error('truncated key blob')
    this.offset = start + length
    return this.buf.subarray(start, start + length)
  }
  text(): string {
    return this.string().toString('latin1')
  }
  mpint(): Buffer {
    const value = this.string()
    if (value.length === 0) throw new Error('empty integer in key blob')
    return value
  }
  end(): void {
    if (this.offset !== this.buf.length) throw new Error('trailing bytes after the key')
  }
}
