import { performance } from 'node:perf_hooks'

// A writer: the connection a write request came on. One that has closed writes no more.
export interface Writer {
  readonly destroyed: boolean
}

// The writers that wrote within the last window or the one before it (one to two windows of
// 10 ms after its last write; longer while the event loop is blocked). The request path counts
// each write request's connection as it is handled (src/request-path.ts), and the store's batches
// wait a moment for the next writes of those still open (countNow, src/store/group-commit.ts).
// The windows are turned rather than swept, so that a write costs one insertion; once no write
// has come for two windows both are let go, so that no connection is held after the writes stop.
export class ActiveWriters {
  private current = new Set<Writer>()
  private previous = new Set<Writer>()
  private windowStartedAt = Number.NEGATIVE_INFINITY
  private forgetTimer: NodeJS.Timeout | undefined

  constructor (private readonly windowMs = 10) {}

  wrote (writer: Writer, now = performance.now()): void {
    this.turn(now)
    this.current.add(writer)
    this.forgetTimer ??= setTimeout(this.forgetOnceQuiet, this.windowMs).unref()
  }

  // How many writers, still open, are active, counting no further than `limit`.
  countUpTo (limit: number, now = performance.now()): number {
    this.turn(now)
    let active = 0
    for (const writer of this.current) {
      if (!writer.destroyed && ++active >= limit) return limit
    }
    for (const writer of this.previous) {
      if (!writer.destroyed && !this.current.has(writer) && ++active >= limit) return limit
    }
    return active
  }

  // countUpTo, as the store's batches ask it.
  readonly countNow = (limit: number): number => this.countUpTo(limit)

  private readonly forgetOnceQuiet = (): void => {
    this.forgetTimer = undefined
    this.turn(performance.now())
    if (this.current.size > 0 || this.previous.size > 0) this.forgetTimer = setTimeout(this.forgetOnceQuiet, this.windowMs).unref()
  }

  private turn (now: number): void {
    const elapsed = now - this.windowStartedAt
    if (elapsed < this.windowMs) return
    this.previous = elapsed < 2 * this.windowMs ? this.current : new Set()
    this.current = new Set()
    this.windowStartedAt = now
  }
}
