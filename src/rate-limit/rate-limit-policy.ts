import { type RateLimitCode, TooManyRequestsError } from '../errors/api-errors.js'
import type { FixedWindowCounter } from './fixed-window-counter.js'

export type PolicyName = 'per-credential' | 'per-address' | 'failed-auth'

// One rate limit: its counter, and the 429 it answers with once a key has used it up.
export class RateLimitPolicy {
  constructor (
    readonly name: PolicyName,
    readonly counter: FixedWindowCounter,
    readonly code: RateLimitCode,
    // What was exceeded, as the message starts: "too many requests for this credential".
    readonly exceeded: string
  ) {}

  refusal (): TooManyRequestsError {
    return new TooManyRequestsError(this.code, this.exceeded, {
      policy: this.name,
      quota: this.counter.limit,
      windowSeconds: this.counter.windowSeconds,
      secondsUntilReset: this.counter.secondsUntilReset(),
    })
  }
}
