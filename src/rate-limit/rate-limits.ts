import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import type { Config } from '../config/config.js'
import { ApiError, ErrorCode } from '../errors/api-errors.js'
import { addressKey } from './client-address.js'
import { FixedWindowCounter } from './fixed-window-counter.js'
import { RateLimitPolicy } from './rate-limit-policy.js'

export type RateLimitSettings = Pick<Config,
  'RATE_LIMIT_WINDOW' | 'RATE_LIMIT_PER_CREDENTIAL' | 'RATE_LIMIT_PER_ADDRESS' | 'RATE_LIMIT_FAILED_AUTH'>

// What tests may change and operators need not: the clock, and how many keys each policy counts
// apart in one window (100,000 keys hold at most some 17 MB per policy: see docs/benchmark.md).
export interface RateLimitTuning {
  readonly now: () => number
  readonly keysPerWindow: number
}

const defaultTuning: RateLimitTuning = { now: Date.now, keysPerWindow: 100_000 }

// Orchestrators' liveness and readiness probes come from few addresses, often many at a time:
// they are never limited, so that an attack never makes an instance look dead or unready.
export const unlimitedOperations: ReadonlySet<string> = new Set(['getHealth', 'getReadiness'])

export interface RateLimits {
  // Before the credentials are looked at, and counting nothing: an address that has failed too
  // often is refused (429 42903) whatever it sends now, a valid token included, so a guessing
  // loop cannot learn from the answers which guess was right until the window ends.
  readonly refuseFailingAddress: onRequestHookHandler
  // A refusal of the credentials (401, or 400 for a malformed header) counts one failure against
  // the address; the request gets that refusal, not a 429.
  readonly countFailedAuthentication: (request: FastifyRequest, failure: Error) => void
  // 429 42901 past RATE_LIMIT_PER_CREDENTIAL, counted by the identity authentication found.
  readonly limitCredential: onRequestHookHandler
  // 429 42902 past RATE_LIMIT_PER_ADDRESS, for the public operations.
  readonly limitAddress: onRequestHookHandler
}

// The rate limits, decided in onRequest hooks, so before a body is read (or invited with 100
// Continue). Each instance counts on its own: behind a balancer, N instances let a client make up
// to N times each limit. The hooks take a callback, not a promise: they run on every request.
// Written here rather than with @fastify/rate-limit, whose hook is async (promises on every
// request), whose headers are draft-06's RateLimit-Limit/-Remaining/-Reset, and whose single key
// per route cannot count only failed authentications, check them before authenticating, and
// count by a credential known only after.
export function createRateLimits (settings: RateLimitSettings, tuning: Partial<RateLimitTuning> = {}): RateLimits {
  const { now, keysPerWindow } = { ...defaultTuning, ...tuning }
  const counter = (limit: number): FixedWindowCounter =>
    new FixedWindowCounter({ limit, windowSeconds: settings.RATE_LIMIT_WINDOW, maxKeys: keysPerWindow, now })
  const perCredential = new RateLimitPolicy('per-credential', counter(settings.RATE_LIMIT_PER_CREDENTIAL),
    ErrorCode.tooManyRequestsForCredential, 'too many requests for this credential')
  const perAddress = new RateLimitPolicy('per-address', counter(settings.RATE_LIMIT_PER_ADDRESS),
    ErrorCode.tooManyRequestsFromAddress, 'too many requests from this address')
  const failedAuth = new RateLimitPolicy('failed-auth', counter(settings.RATE_LIMIT_FAILED_AUTH),
    ErrorCode.tooManyFailedAuthentications, 'too many failed authentications from this address')

  return {
    refuseFailingAddress: function refuseFailingAddress (request, _reply, done) {
      done(failedAuth.counter.isExhausted(addressKey(request.ip)) ? failedAuth.refusal() : undefined)
    },
    countFailedAuthentication: (request, failure) => {
      if (isRefusedCredential(failure)) failedAuth.counter.hit(addressKey(request.ip))
    },
    limitCredential: function limitCredential (request, _reply, done) {
      done(perCredential.counter.hit(credentialKey(request)) ? undefined : perCredential.refusal())
    },
    limitAddress: function limitAddress (request, _reply, done) {
      done(perAddress.counter.hit(addressKey(request.ip)) ? undefined : perAddress.refusal())
    },
  }
}

// A security handler that accepts a request without naming its identity still has it counted,
// by the address it came from.
function credentialKey (request: FastifyRequest): string {
  return request.identity?.key ?? addressKey(request.ip)
}

// A 503 (the store or the identity provider unreachable) says nothing of the credentials.
function isRefusedCredential (error: Error): boolean {
  return error instanceof ApiError && (error.statusCode === 400 || error.statusCode === 401)
}
