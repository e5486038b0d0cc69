import { Counter, Histogram, Registry } from 'prom-client'
import { prettyFactory } from 'pino-pretty'
import { prettyLogLine } from '../src/http/pretty-log-line.js'
import { latencyBoundsMs, RequestMetrics } from '../src/observability/request-metrics.js'

// `npm run bench:libraries`: what two pieces of the service cost beside the well-kept library
// that does the same, per request, in this process (docs/benchmark.md says why each is kept).
// Medians of several timed loops, after a warm-up.

const iterations = 1_000_000
const loops = 7

function nanosecondsPerCall (work: (index: number) => void, calls = iterations): number {
  for (let index = 0; index < calls / 10; index++) work(index)
  const times: number[] = []
  for (let loop = 0; loop < loops; loop++) {
    const start = process.hrtime.bigint()
    for (let index = 0; index < calls; index++) work(index)
    times.push(Number(process.hrtime.bigint() - start) / calls)
  }
  return times.sort((a, b) => a - b)[Math.floor(loops / 2)]!
}

// Every request is counted by operation and status, and timed by operation.
const operations = ['createPlant', 'getPlant'] as const
const statuses = [200, 200, 200, 409] as const

const byHand = new RequestMetrics()
const handKept = operations.map((operation) => byHand.forOperation(operation))

const registry = new Registry()
const requests = new Counter({ name: 'requests_total', help: 'h', labelNames: ['operation', 'status'], registers: [registry] })
const durations = new Histogram({
  name: 'duration_seconds', help: 'h', labelNames: ['operation'], buckets: latencyBoundsMs.map((bound) => bound / 1000), registers: [registry],
})
// Label children made once, as a route would keep them: prom-client still hashes the labels at
// every update.
const counted = operations.map((operation) => new Map(statuses.map((status) => [status, requests.labels(operation, String(status))])))
const timed = operations.map((operation) => durations.labels(operation))

const metrics = {
  handKept: nanosecondsPerCall((index) => {
    handKept[index & 1]!.record(statuses[index & 3]!, 1.3)
  }),
  promClient: nanosecondsPerCall((index) => {
    counted[index & 1]!.get(statuses[index & 3]!)!.inc()
    timed[index & 1]!.observe(0.0013)
  }),
}

// An access line as the service writes it.
const line = JSON.stringify({
  level: 30,
  time: Date.now(),
  pid: 1,
  hostname: 'host',
  reqId: 'f3b7c2a0-5d1e-4c4f-9a57-1f0e2d3c4b5a',
  req: { method: 'POST', url: '/plants', remoteAddress: '127.0.0.1', identity: 'token:default' },
  res: { statusCode: 409 },
  responseTime: 1.3,
  failure: { code: 40901, message: 'a plant with id 7 already exists with a different name or tag' },
  msg: 'request completed',
})
const pinoPretty = prettyFactory({
  colorize: false,
  singleLine: true,
  translateTime: 'HH:MM:ss.l',
  ignore: 'pid,hostname,req,res,responseTime',
  messageFormat: '{req.method} {req.url} {res.statusCode} {responseTime} ms by {req.identity} {msg}',
})
const pretty = {
  own: nanosecondsPerCall(() => prettyLogLine(line, false), iterations / 10),
  pinoPretty: nanosecondsPerCall(() => pinoPretty(line), iterations / 10),
}

const microseconds = (nanoseconds: number): string => `${(nanoseconds / 1000).toFixed(2)} µs`
process.stdout.write([
  `Node ${process.version}, medians of ${loops} loops`,
  `request metrics, per request: kept by hand ${microseconds(metrics.handKept)}, prom-client with cached label children ${microseconds(metrics.promClient)}`,
  `readable log line, per line: this service's ${microseconds(pretty.own)}, pino-pretty's prettyFactory ${microseconds(pretty.pinoPretty)}`,
  `  this service's: ${prettyLogLine(line, false).trimEnd()}`,
  `  pino-pretty's:  ${pinoPretty(line).trimEnd()}`,
  '',
].join('\n'))
