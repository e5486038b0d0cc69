import { createServer } from 'node:http'

// A webhook receiver for `npm run bench`, in a process of its own so that it costs neither the
// service nor the load generator: answers 200 at once, and counts what it receives with the
// delay from the change's commit (the body's timestamp, just before the create's 200) to its
// receipt. GET /stats answers the count and the delays' percentiles; POST /reset forgets them.
let received = 0
let delaysMs: number[] = []

function percentile (sorted: readonly number[], fraction: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    if (request.method === 'GET' && request.url === '/stats') {
      const sorted = [...delaysMs].sort((a, b) => a - b)
      response.end(JSON.stringify({ received, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), maxMs: sorted.at(-1) ?? Number.NaN }))
      return
    }
    if (request.method === 'POST' && request.url === '/reset') {
      received = 0
      delaysMs = []
      response.end()
      return
    }
    received++
    const timestamp = /"timestamp":"([^"]+)"/.exec(Buffer.concat(chunks).toString('utf8'))?.[1]
    if (timestamp !== undefined && delaysMs.length < 1_000_000) delaysMs.push(Date.now() - Date.parse(timestamp))
    response.end()
  })
})
server.keepAliveTimeout = 60_000
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1')
process.once('SIGTERM', () => {
  server.closeAllConnections()
  server.close(() => process.exit(0))
})
