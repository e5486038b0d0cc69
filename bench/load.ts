import autocannon from 'autocannon'

export interface LoadOptions {
  readonly url: string
  readonly token?: string
  readonly connections: number
  readonly durationSeconds: number
  // The next request body; called once per request, so every request can carry a new id.
  readonly nextBody: () => string
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
// request as soon as the previous response arrives.
export async function runLoad (options: LoadOptions): Promise<LoadResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  const result = await autocannon({
    url: options.url,
    method: 'POST',
    connections: options.connections,
    duration: options.durationSeconds,
    timeout: 10,
    headers,
    requests: [{ setupRequest: (request) => ({ ...request, body: options.nextBody() }) }],
  })
  return {
    requestsPerSecond: result.requests.total / options.durationSeconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    responses: result.requests.total,
    failures: result.non2xx + result.errors + result.timeouts,
  }
}
