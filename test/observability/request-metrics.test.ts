import { Counter, Histogram, Registry } from 'prom-client'
import t from 'tap'
import { latencyBoundsMs, RequestMetrics } from '../../src/observability/request-metrics.js'

// The request metrics are kept by hand for speed; their text must be what prom-client would
// write for the same responses.

const responses: Array<[string, number, number]> = [
  ['createPlant', 200, 0.1], ['createPlant', 200, 0.25], ['createPlant', 409, 3], ['getPlant', 404, 12_000], ['unrouted', 405, 1],
]

function byPromClient (): Promise<string> {
  const registry = new Registry()
  const requests = new Counter({
    name: 'plant_store_http_requests_total',
    help: 'Responses sent, by operation (operationId; "unrouted" for no route; "unparsed", not timed, for malformed HTTP, 408 and 431) and status code.',
    labelNames: ['operation', 'status'],
    registers: [registry],
  })
  const durations = new Histogram({
    name: 'plant_store_http_request_duration_seconds',
    help: 'Time from a request\'s arrival to its response\'s end, by operation.',
    labelNames: ['operation'],
    buckets: latencyBoundsMs.map((boundMs) => boundMs / 1000),
    registers: [registry],
  })
  for (const [operation, status, elapsedMs] of responses) {
    requests.labels(operation, String(status)).inc()
    durations.labels(operation).observe(elapsedMs / 1000)
  }
  return registry.metrics()
}

function withoutSums (text: string): string[] {
  return text.trim().split('\n').filter((line) => !line.includes('_sum{'))
}

function sumsOf (text: string): number[] {
  return text.split('\n').filter((line) => line.includes('_sum{')).map((line) => Number(line.split(' ')[1]))
}

t.test('the text is prom-client\'s for the same responses', async (t) => {
  const metrics = new RequestMetrics()
  for (const [operation, status, elapsedMs] of responses) metrics.forOperation(operation).record(status, elapsedMs)
  const expected = await byPromClient()
  t.same(withoutSums(metrics.exposition()), withoutSums(expected))
  // Summed in milliseconds rather than seconds: equal but for rounding.
  const sums = sumsOf(metrics.exposition())
  for (const [index, sum] of sumsOf(expected).entries()) t.ok(Math.abs((sums[index] ?? NaN) - sum) < 1e-9)
})

t.test('an operation name that would need escaping is refused', async (t) => {
  t.throws(() => new RequestMetrics().forOperation('a"b'))
})
