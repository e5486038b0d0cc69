// Upper bounds of the latency buckets, in milliseconds as Fastify measures (they are exposed in
// seconds): fine below 5 ms, where this service answers most requests, then prom-client's defaults.
export const latencyBoundsMs = [0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000]

const requestsName = 'plant_store_http_requests_total'
const durationName = 'plant_store_http_request_duration_seconds'

// One operation's responses: counts by status, and a latency histogram.
export class OperationMetrics {
  readonly #responses = new Map<number, number>()
  // Responses per bucket, not cumulated; the last is beyond every bound (+Inf).
  readonly #buckets = new Float64Array(latencyBoundsMs.length + 1)
  #sumMs = 0
  #count = 0

  constructor (readonly operation: string) {}

  record (statusCode: number, elapsedMs: number): void {
    this.countResponse(statusCode)
    let bucket = 0
    while (bucket < latencyBoundsMs.length && elapsedMs > latencyBoundsMs[bucket]!) bucket++
    this.#buckets[bucket]! += 1
    this.#sumMs += elapsedMs
    this.#count++
  }

  // A response whose latency is not known: counted, not timed.
  countResponse (statusCode: number): void {
    this.#responses.set(statusCode, (this.#responses.get(statusCode) ?? 0) + 1)
  }

  requestLines (): string[] {
    return [...this.#responses].map(([status, count]) =>
      `${requestsName}{operation="${this.operation}",status="${status}"} ${count}`)
  }

  durationLines (): string[] {
    // Only counted, never timed ("unparsed"): no histogram rather than one of zeros.
    if (this.#count === 0) return []
    const label = `operation="${this.operation}"`
    let cumulated = 0
    const lines = latencyBoundsMs.map((boundMs, bucket) => {
      cumulated += this.#buckets[bucket]!
      return `${durationName}_bucket{le="${boundMs / 1000}",${label}} ${cumulated}`
    })
    lines.push(
      `${durationName}_bucket{le="+Inf",${label}} ${this.#count}`,
      `${durationName}_sum{${label}} ${this.#sumMs / 1000}`,
      `${durationName}_count{${label}} ${this.#count}`)
    return lines
  }
}

// The request counter and latency histogram, kept in plain numbers rather than in prom-client's
// metrics: these are updated on every request, and prom-client hashes the labels at every update,
// cached label children included (`npm run bench:libraries`; docs/benchmark.md has the figures).
// The text is Prometheus' exposition format, as prom-client writes it
// (test/observability/request-metrics.test.ts compares the two).
export class RequestMetrics {
  readonly #operations = new Map<string, OperationMetrics>()

  // Operations are the spec's operationIds and a fixed name for unrouted requests, so label
  // values never need escaping; anything else is refused rather than written unescaped.
  forOperation (operation: string): OperationMetrics {
    if (!/^[A-Za-z0-9_.-]+$/.test(operation)) throw new Error(`not an operation name: ${JSON.stringify(operation)}`)
    let metrics = this.#operations.get(operation)
    if (metrics === undefined) {
      metrics = new OperationMetrics(operation)
      this.#operations.set(operation, metrics)
    }
    return metrics
  }

  // One response of an operation: a map lookup, where forOperation also checks the name.
  record (operation: string, statusCode: number, elapsedMs: number): void {
    (this.#operations.get(operation) ?? this.forOperation(operation)).record(statusCode, elapsedMs)
  }

  exposition (): string {
    const operations = [...this.#operations.values()]
    return [
      `# HELP ${requestsName} Responses sent, by operation (operationId; "unrouted" for no route; "unparsed", not timed, for malformed HTTP, 408 and 431) and status code.`,
      `# TYPE ${requestsName} counter`,
      ...operations.flatMap((operation) => operation.requestLines()),
      '',
      `# HELP ${durationName} Time from a request's arrival to its response's end, by operation.`,
      `# TYPE ${durationName} histogram`,
      ...operations.flatMap((operation) => operation.durationLines()),
    ].join('\n') + '\n'
  }
}
