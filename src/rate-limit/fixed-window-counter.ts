export interface FixedWindowCounterOptions {
  // The most hits a key may have in one window.
  readonly limit: number
  readonly windowSeconds: number
  // The most keys counted apart in one window; the keys beyond are counted together (see below).
  readonly maxKeys: number
  // Milliseconds since the epoch; tests pass a clock of their own to roll windows at will.
  readonly now: () => number
}

// Counts hits per key in fixed windows, aligned to the clock (a 60-second window starts on each
// minute), so that every key's window ends at the same moment and one Map holds the whole window:
// when the window rolls over, the Map is replaced rather than swept, and memory is bounded by the
// keys seen in one window. A fixed window lets a client make up to twice the limit across a
// boundary; it costs one Map lookup per hit, with no timer and no per-key expiry to track.
//
// At most maxKeys keys are counted apart in one window. Past that, every new key shares one
// overflow counter: memory stays bounded however many addresses a flood comes from, at the price
// that, once the overflow counter reaches the limit, keys first seen in that window are refused
// until it ends, while the keys counted apart are unaffected.
export class FixedWindowCounter {
  readonly limit: number
  readonly windowSeconds: number
  readonly #windowMs: number
  readonly #maxKeys: number
  readonly #now: () => number
  #counts = new Map<string, number>()
  #overflowCount = 0
  #windowEnd = 0

  constructor ({ limit, windowSeconds, maxKeys, now }: FixedWindowCounterOptions) {
    this.limit = limit
    this.windowSeconds = windowSeconds
    this.#windowMs = windowSeconds * 1000
    this.#maxKeys = maxKeys
    this.#now = now
  }

  // Counts one hit of `key`; true while the key is within its limit, this hit included.
  hit (key: string): boolean {
    this.#rollOver()
    const count = this.#counts.get(key)
    if (count !== undefined) {
      this.#counts.set(key, count + 1)
      return count < this.limit
    }
    if (this.#counts.size < this.#maxKeys) {
      this.#counts.set(key, 1)
      return this.limit >= 1
    }
    this.#overflowCount += 1
    return this.#overflowCount <= this.limit
  }

  // Whether `key` has used up its limit in this window; counts nothing.
  isExhausted (key: string): boolean {
    this.#rollOver()
    return this.#countOf(key) >= this.limit
  }

  // Whole seconds until this window ends, rounded up: at least 1, at most windowSeconds.
  secondsUntilReset (): number {
    this.#rollOver()
    return Math.max(1, Math.ceil((this.#windowEnd - this.#now()) / 1000))
  }

  // The keys counted apart in this window (the overflow counter is not one of them).
  get keyCount (): number {
    this.#rollOver()
    return this.#counts.size
  }

  #countOf (key: string): number {
    const count = this.#counts.get(key)
    if (count !== undefined) return count
    return this.#counts.size < this.#maxKeys ? 0 : this.#overflowCount
  }

  #rollOver (): void {
    const now = this.#now()
    // A clock set back (by NTP, say) starts a new window too, rather than hold this one for as
    // long as the clock went back.
    if (now < this.#windowEnd && now >= this.#windowEnd - this.#windowMs) return
    this.#counts = new Map()
    this.#overflowCount = 0
    this.#windowEnd = (Math.floor(now / this.#windowMs) + 1) * this.#windowMs
  }
}
