import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import type { Config } from '../config.js'
import { ApiError, ErrorCode } from '../errors/api-errors.js'
import { addressKey } from './client-address.js'
import { FixedWindowCounter } from './fixed-window-counter.js'
import { RateLimitPolicy } from './rate-limit-policy.js'

export type RateLimitSettings = Pick<Config,
  'RATE_LIMIT_WINDOW' | 'RATE_LIMIT_PER_CREDENTIAL' | 'RATE_LIMIT_PER_ADDRESS' | 'RATE_LIMIT_FAILED_AUTH'>

// What tests may change and operators need not: the clock, and how many keys each policy counts
// apart in one window. A key took 70 bytes (IPv4) to 170 bytes (an IPv6 /64) of heap when
// measured, so 100,000 keys hold at most some 17 MB per policy; only a flood from that many
// addresses fills one.
export interface RateLimitTuning {
  readonly now: () => number
  readonly keysPerWindow: number
}

const defaultTuning: RateLimitTuning = { now: Date.now, keysPerWindow: 100_000 }

// Orchestrators' liveness and readiness probes come from few addresses, often many at a time:
// they are never limited, so that an attack never makes an instance look dead or unready.
export const unlimitedOperations: ReadonlySet<string> = new Set(['getHealth', 'getReadiness'])

export interface RateLimits {
  // A protected operation's onRequest hooks, around its authentication hook.
  readonly forProtectedOperation: (authenticate: onRequestHookHandler) => onRequestHookHandler[]
  // A public operation's onRequest hooks: none for the probes.
  readonly forPublicOperation: (operationId: string) => onRequestHookHandler[]
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

  // Before the credentials are looked at, and counting nothing: an address that has failed too
  // often is refused whatever it sends now, a valid token included, so a guessing loop cannot
  // learn from the answers which guess was right until the window ends.
  const refuseFailingAddress: onRequestHookHandler = (request, _reply, done) => {
    done(failedAuth.counter.isExhausted(addressKey(request.ip)) ? failedAuth.refusal() : undefined)
  }

  // A refusal of the credentials (401, or 400 for a malformed header) counts one failure
  // against the address; the request gets that refusal, not a 429.
  const countingFailures = (authenticate: onRequestHookHandler): onRequestHookHandler =>
    function authenticateCountingFailures (request, reply, done) {
      authenticate.call(this, request, reply, (error) => {
        if (isRefusedCredential(error)) failedAuth.counter.hit(addressKey(request.ip))
        done(error)
      })
    }

  const limitCredential: onRequestHookHandler = (request, _reply, done) => {
    done(perCredential.counter.hit(credentialKey(request)) ? undefined : perCredential.refusal())
  }

  const limitAddress: onRequestHookHandler = (request, _reply, done) => {
    done(perAddress.counter.hit(addressKey(request.ip)) ? undefined : perAddress.refusal())
  }

  return {
    forProtectedOperation: (authenticate) => [refuseFailingAddress, countingFailures(authenticate), limitCredential],
    forPublicOperation: (operationId) => unlimitedOperations.has(operationId) ? [] : [limitAddress],
  }
}

// A security handler that accepts a request without naming its identity still has it counted,
// by the address it came from.
function credentialKey (request: FastifyRequest): string {
  return request.identity?.key ?? addressKey(request.ip)
}

// A 503 (the store or the identity provider unreachable) says nothing of the credentials.
function isRefusedCredential (error: Error | undefined | null): boolean {
  return error instanceof ApiError && (error.statusCode === 400 || error.statusCode === 401)
}
