import { createServer } from 'node:http'
import { percentileOf } from './percentile.js'

// A webhook receiver for `npm run bench`, in a process of its own so that it costs neither the
// service nor the load generator: answers 200 at once, and counts what it receives with the
// delay from the change's commit (the body's timestamp, taken as its batch began) to its receipt.
// GET /stats answers the count, the distinct plants told of (a duplicate counted once, up to a
// million plants) and the delays' percentiles; GET /receipts when each plant's first message
// arrived (milliseconds since the epoch, by plant id), for the load generator to set beside its
// create's 200; POST /reset forgets them all.
const keptAtMost = 1_000_000
let received = 0
let delaysMs: number[] = []
let receiptsByPlantId = new Map<string, number>()

const server = createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    if (request.method === 'GET' && request.url === '/stats') {
      const sorted = [...delaysMs].sort((a, b) => a - b)
      response.end(JSON.stringify({ received, plants: receiptsByPlantId.size, p50Ms: percentileOf(sorted, 0.5), p99Ms: percentileOf(sorted, 0.99), maxMs: sorted.at(-1) ?? Number.NaN }))
      return
    }
    if (request.method === 'GET' && request.url === '/receipts') {
      response.end(JSON.stringify(Object.fromEntries(receiptsByPlantId)))
      return
    }
    if (request.method === 'POST' && request.url === '/reset') {
      received = 0
      delaysMs = []
      receiptsByPlantId = new Map()
      response.end()
      return
    }
    // The body's timestamp is the service's Date.now(), so the delay from commit is read on that
    // clock. A receipt is noted as the load generator notes a 200 (the wall clock at the process's
    // start, then the monotonic clock), so that the two agree to a fraction of a millisecond.
    const receivedAt = performance.timeOrigin + performance.now()
    received++
    const body = Buffer.concat(chunks).toString('utf8')
    const timestamp = /"timestamp":"([^"]+)"/.exec(body)?.[1]
    if (timestamp !== undefined && delaysMs.length < keptAtMost) delaysMs.push(Date.now() - Date.parse(timestamp))
    // A retry or a duplicate after a crash arrives later: the first receipt is the delivery.
    const plantId = /"data":\{"id":(\d+)/.exec(body)?.[1]
    if (plantId !== undefined && !receiptsByPlantId.has(plantId) && receiptsByPlantId.size < keptAtMost) receiptsByPlantId.set(plantId, receivedAt)
    response.end()
  })
})
server.keepAliveTimeout = 60_000
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1')
process.once('SIGTERM', () => {
  server.closeAllConnections()
  server.close(() => process.exit(0))
})
