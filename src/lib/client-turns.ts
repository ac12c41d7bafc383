/**
 * Whose turn comes next among the clients waiting for shared workers (the SQLite read thread, the
 * markdown render pool): the client whose last turn is the least recent. A client with no turn
 * remembered (none yet, or nothing of it running or waiting since its last) counts as served just
 * before the last turn given when its work was queued (`since`, what `given` said then): after the
 * clients already waiting longer, before the one served last, so a stream of clients asking one
 * thing at a time cannot keep another client's second one waiting. Clients with nothing running or
 * waiting are forgotten (`forget`): what is remembered is as small as the work.
 */
export class ClientTurns {
  private readonly last = new Map<string, number>()
  private turns = 0

  /** The turns given so far: what work queued now remembers as its `since`. */
  get given(): number {
    return this.turns
  }

  /** How many clients' turns are remembered now. */
  get remembered(): number {
    return this.last.size
  }

  /** The rank of `client`'s work queued at `since`: the lowest goes first. */
  rank(client: string, since: number): number {
    return this.last.get(client) ?? since - 0.5
  }

  /** `client`'s work starts: its turn. */
  took(client: string): void {
    this.last.set(client, ++this.turns)
  }

  /** `client` has nothing running or waiting any more. */
  forget(client: string): void {
    this.last.delete(client)
  }

  /** Everything waiting was dropped. */
  clear(): void {
    this.last.clear()
  }
}
