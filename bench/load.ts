import autocannon from 'autocannon'

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
  readonly durationSeconds: number
  // The next request; called once per request, so every request can carry a new id.
  readonly nextRequest: () => BenchRequest
  // Requests a second over all connections; as fast as answers come when left out.
  readonly rate?: number
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
  const authorization: Record<string, string> = options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }
  const result = await autocannon({
    url: options.baseUrl,
    connections: options.connections,
    duration: options.durationSeconds,
    timeout: 10,
    ...(options.rate === undefined ? {} : { overallRate: options.rate }),
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
