import { performance } from 'node:perf_hooks'

// A writer: the connection a write came on. One that has closed writes no more.
export interface Writer {
  readonly destroyed: boolean
}

// The writers that wrote within the last window or the one before it. The windows are turned
// rather than swept, so that a write costs one insertion; once no write has come for two
// windows both are let go, so that no connection is held after the writes stop.
export class ActiveWriters {
  private current = new Set<Writer>()
  private previous = new Set<Writer>()
  private windowStartedAt = Number.NEGATIVE_INFINITY
  private forgetTimer: NodeJS.Timeout | undefined

  constructor (private readonly windowMs: number) {}

  wrote (writer: Writer, now: number): void {
    this.turn(now)
    this.current.add(writer)
    this.forgetTimer ??= setTimeout(this.forgetOnceQuiet, this.windowMs).unref()
  }

  // How many writers, still open, are active, counting no further than `limit`.
  countUpTo (limit: number, now: number): number {
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
