import autocannon from 'autocannon'
import { setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'undici'
import { percentileOf } from './percentile.js'

// One request of a run: a create's body, or a read's path.
export interface BenchRequest {
  readonly method: 'GET' | 'POST'
  // Under the server's address: /plants, /plants/42, /plants?limit=100.
  readonly path: string
  readonly body?: string
}

export interface LoadOptions {
  // The server's address.
  readonly baseUrl: string
  readonly token?: string
  readonly connections: number
  // Requests each connection keeps in flight (HTTP pipelining); one when not given.
  readonly pipelining?: number
  readonly durationSeconds: number
  // The next request; called once per request, so every request can carry a new id.
  readonly nextRequest: () => BenchRequest
}

export interface LoadResult {
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly responses: number
  // Responses other than 2xx, and requests that got no response (errors and timeouts).
  readonly failures: number
}

// One load run from this process: `connections` keep-alive connections, each sending its next
// request as soon as the previous response arrives (or, pipelining, as soon as one of its
// `pipelining` requests in flight is answered).
export async function runLoad (options: LoadOptions): Promise<LoadResult> {
  const authorization: Record<string, string> = options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }
  const result = await autocannon({
    url: options.baseUrl,
    connections: options.connections,
    pipelining: options.pipelining ?? 1,
    duration: options.durationSeconds,
    timeout: 10,
    requests: [{
      setupRequest: (request) => {
        const { method, path, body } = options.nextRequest()
        return body === undefined
          ? { ...request, method, path, headers: authorization }
          : { ...request, method, path, body, headers: { ...authorization, 'content-type': 'application/json' } }
      },
    }],
  })
  return {
    requestsPerSecond: result.requests.total / options.durationSeconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    responses: result.requests.total,
    failures: result.non2xx + result.errors + result.timeouts,
  }
}

export interface SteadyLoadOptions extends LoadOptions {
  readonly rate: number
  // Told of each 2xx with when its head arrived, in milliseconds since the epoch to a fraction
  // (performance.timeOrigin + performance.now(), as the benchmark's receiver reads its clock).
  readonly onAnswered?: (request: BenchRequest, answeredAtMs: number) => void
}

// Requests sent at a steady `rate` a second, spread evenly over each second (autocannon's own
// rate sends each second's requests as fast as it can, then waits for the next second: bursts
// at full speed, not a steady load), on up to `connections` keep-alive connections.
export async function runSteadyLoad (options: SteadyLoadOptions): Promise<LoadResult> {
  const pool = new Pool(options.baseUrl, { connections: options.connections })
  const headers: Record<string, string> = options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }
  const latenciesMs: number[] = []
  let failures = 0
  const inFlight = new Set<Promise<void>>()
  const send = (): void => {
    const benchRequest = options.nextRequest()
    const { method, path, body } = benchRequest
    const sentAt = performance.now()
    const request: Promise<void> = pool.request({ method, path, body: body ?? null, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' } })
      .then(async (response) => {
        // Read first: what this process does next must not make the answer look later.
        const answeredAtMs = performance.timeOrigin + performance.now()
        await response.body.dump()
        if (response.statusCode >= 200 && response.statusCode < 300) {
          latenciesMs.push(performance.now() - sentAt)
          options.onAnswered?.(benchRequest, answeredAtMs)
        } else {
          failures++
        }
      }, () => { failures++ })
      .finally(() => inFlight.delete(request))
    inFlight.add(request)
  }
  const started = performance.now()
  let sent = 0
  for (let elapsed = 0; elapsed < options.durationSeconds * 1000; elapsed = performance.now() - started) {
    for (const due = Math.floor(elapsed / 1000 * options.rate); sent < due; sent++) send()
    await sleep(1)
  }
  await Promise.all(inFlight)
  await pool.close()
  const sorted = latenciesMs.sort((a, b) => a - b)
  return {
    requestsPerSecond: sorted.length / options.durationSeconds,
    p50Ms: percentileOf(sorted, 0.5),
    p99Ms: percentileOf(sorted, 0.99),
    responses: sorted.length,
    failures,
  }
}
