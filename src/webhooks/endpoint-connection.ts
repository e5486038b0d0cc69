import { setMaxListeners } from 'node:events'
import { isIP } from 'node:net'
import { performance } from 'node:perf_hooks'
import { type Dispatcher, errors, Pool } from 'undici'
import { longestRetryWaitSeconds } from '../config/settings.js'
import { type EndpointUrlPolicy, hostOf, RefusedUrlError } from '../endpoint-urls/endpoint-url-policy.js'

// What one attempt came to: delivered (a 2xx); gone, the endpoint saying it is gone for good
// (410); or failed, for any other reason, and then when the endpoint asked to be tried again
// (Retry-After of a 429 or 503). A failure says why in words a person reads in the endpoint's
// lastFailure.
export type AttemptOutcome =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'gone', readonly reason: string }
  | { readonly kind: 'failed', readonly reason: string, readonly retryAfterMs?: number }

export interface Attempt {
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

// The most attempts in flight to one endpoint: one slow endpoint holds this many connections,
// and no more, while the others go on.
export const maxInFlightPerEndpoint = 16

// What is read of an answer's body, at most: nothing in it is used.
const maxAnswerBodyBytes = 128 * 1024

// Attempts started within this share of the timeout share one signal that ends them all.
const attemptsPerDeadlineWithin = 1 / 15

// The longest an attempt can take, from its start to its end, for a timeout of timeoutMs.
export function attemptEndsWithinMs (timeoutMs: number): number {
  return timeoutMs * (1 + attemptsPerDeadlineWithin)
}

// The connections to one endpoint's origin (undici keeps them alive between deliveries).
// Redirects are never followed: a 3xx is a failure. Each connection resolves and checks the
// endpoint's host name as it opens (EndpointUrlPolicy.lookup); an IP literal, which no lookup
// sees, is checked once here: neither it nor the policy can change.
export class EndpointConnection {
  private readonly pool: Pool
  private readonly path: string
  // Why the endpoint's address is refused, or undefined when it is not.
  private readonly refusal: Promise<unknown>
  private readonly sharedDeadlineWithinMs: number
  // The timeout as a failure's reason says it ("1 second", "2.5 seconds").
  private readonly timeoutInWords: string
  private deadline: AbortSignal | undefined
  private deadlineSince = Number.NEGATIVE_INFINITY

  constructor (url: URL, policy: EndpointUrlPolicy, private readonly timeoutMs: number) {
    this.path = `${url.pathname}${url.search}`
    this.sharedDeadlineWithinMs = timeoutMs * attemptsPerDeadlineWithin
    const seconds = Number((timeoutMs / 1000).toFixed(3))
    this.timeoutInWords = seconds === 1 ? '1 second' : `${seconds} seconds`
    this.refusal = isIP(hostOf(url)) === 0
      ? Promise.resolve(undefined)
      : policy.addressesOf(url).then(() => undefined, (error: unknown) => error)
    this.pool = new Pool(url.origin, {
      connections: maxInFlightPerEndpoint,
      connect: { lookup: policy.lookup, timeout: timeoutMs },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    })
  }

  async send ({ headers, body }: Attempt): Promise<AttemptOutcome> {
    try {
      const refusal = await this.refusal
      if (refusal !== undefined) throw refusal
      const { statusCode, retryAfter } = await this.post({ headers, body })
      return outcomeOf(statusCode, retryAfter)
    } catch (error) {
      return { kind: 'failed', reason: this.reasonOf(error) }
    }
  }

  async close (): Promise<void> {
    await this.pool.destroy()
  }

  // One POST through the pool's dispatcher, keeping the status and Retry-After of the answer and
  // dropping its body as it comes (request() wraps each answer in a stream and promises that
  // nobody here reads: docs/benchmark.md has what that cost). The body's end, or its failure,
  // ends the attempt; an answer whose status came is judged by it. As request() does, a
  // deadline that passes while the request waits for a connection aborts it once it has one.
  private async post ({ headers, body }: Attempt): Promise<{ statusCode: number, retryAfter: string | string[] | undefined }> {
    const deadline = this.attemptDeadline()
    return new Promise((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined
      let statusCode = 0
      let retryAfter: string | string[] | undefined
      let bodyBytes = 0
      const abortOnDeadline = (): void => { controller?.abort(deadline.reason) }
      deadline.addEventListener('abort', abortOnDeadline, { once: true })
      const settle = (error: Error | undefined): void => {
        deadline.removeEventListener('abort', abortOnDeadline)
        if (statusCode === 0) reject(error ?? new Error('the answer ended without a status'))
        else resolve({ statusCode, retryAfter })
      }
      this.pool.dispatch({ method: 'POST', path: this.path, headers: { 'content-type': 'application/json', ...headers }, body }, {
        onRequestStart (started) {
          controller = started
          if (deadline.aborted) started.abort(deadline.reason)
        },
        onResponseStart (_controller, status, responseHeaders) {
          // An informational answer (103 Early Hints) is not the answer.
          if (status < 200) return
          statusCode = status
          retryAfter = responseHeaders['retry-after']
        },
        // A body past what any receiver has to say ends the attempt, judged by its status.
        onResponseData (dataController, chunk) {
          bodyBytes += chunk.length
          if (bodyBytes > maxAnswerBodyBytes) dataController.abort(new Error(`the answer's body passed ${maxAnswerBodyBytes} bytes`))
        },
        onResponseEnd () { settle(undefined) },
        onResponseError (_controller, error) { settle(error) },
      })
    })
  }

  // The whole attempt, from its start to its answer's last byte, ends after timeoutMs (undici's
  // own timeouts bound each phase alone: a body trickled a byte at a time would never end).
  // An AbortSignal.timeout for each attempt keeps a timer alive for the whole timeout, thousands
  // at a time, and took a sixth of the CPU of a create with its delivery (docs/benchmark.md); the
  // attempts started within a fifteenth of the timeout share one, which fires that much after
  // the timeout: each attempt has between the timeout and a fifteenth more (15 to 16 s by default).
  private attemptDeadline (): AbortSignal {
    const now = performance.now()
    if (this.deadline === undefined || now - this.deadlineSince >= this.sharedDeadlineWithinMs) {
      this.deadline = AbortSignal.timeout(Math.ceil(attemptEndsWithinMs(this.timeoutMs)))
      // Every attempt in flight listens to it until its answer is closed, before its place is
      // freed: up to maxInFlightPerEndpoint at once, more than Node's default of 10, and no leak.
      setMaxListeners(maxInFlightPerEndpoint, this.deadline)
      this.deadlineSince = now
    }
    return this.deadline
  }

  private reasonOf (error: unknown): string {
    const timedOut = (error instanceof Error && error.name === 'TimeoutError') ||
      error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError
    if (timedOut) return `timed out after ${this.timeoutInWords}`
    if (error instanceof errors.ConnectTimeoutError) return `could not connect within ${this.timeoutInWords}`
    const code = (error as { code?: unknown }).code
    if (code === 'ECONNREFUSED') return 'connection refused'
    if (error instanceof RefusedUrlError) return `refused: ${error.message}`
    return error instanceof Error ? `could not send: ${typeof code === 'string' ? code : error.message}` : 'could not send'
  }
}

function outcomeOf (status: number, retryAfter: string | string[] | undefined): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: 'delivered' }
  if (status >= 300 && status < 400) return { kind: 'failed', reason: `answered ${status} (redirects are not followed)` }
  if (status === 410) return { kind: 'gone', reason: 'answered 410 Gone' }
  const retryAfterMs = status === 429 || status === 503 ? retryAfterMsOf(retryAfter) : undefined
  return retryAfterMs === undefined ? { kind: 'failed', reason: `answered ${status}` } : { kind: 'failed', reason: `answered ${status}`, retryAfterMs }
}

// Retry-After is seconds or an HTTP date (RFC 9110 §10.2.3); anything else is ignored. A wait
// is held to the longest a retry schedule may have: a receiver's 10^20 seconds would make an
// attempt time no database column holds.
function retryAfterMsOf (header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (value === undefined) return undefined
  const longest = longestRetryWaitSeconds * 1000
  if (/^\d+$/.test(value.trim())) return Math.min(Number(value.trim()) * 1000, longest)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, date - Date.now()), longest)
}
