import { connect, type Socket } from 'node:net'
import t from 'tap'
import { createPlant, startServer } from '../support/running-server.js'
import { watchMemory } from './support/process-memory.js'
import { testFolder } from '../support/test-folder.js'

// Clients that send their headers or their body a trickle at a time are cut at REQUEST_TIMEOUT
// with a 408 Error body, and do not slow anyone else down meanwhile.
const token = 'reliability-slow-clients-token-0123456789'
const requestTimeoutMs = 1000
const slowClientsOfEachKind = 200

interface SlowClient {
  readonly answer: Promise<{ readonly text: string, readonly afterMs: number }>
}

// Writes `head` at once, then `trickle` one byte every 100 ms, until the service answers and
// closes the connection.
function slowClient (port: number, head: string, trickle: string): SlowClient {
  const started = performance.now()
  const socket: Socket = connect(port, '127.0.0.1')
  let text = ''
  let sent = 0
  socket.on('error', () => {})
  socket.on('data', (chunk) => { text += String(chunk) })
  let timer: NodeJS.Timeout | undefined
  socket.once('connect', () => {
    socket.write(head)
    timer = setInterval(() => {
      if (sent < trickle.length && socket.writable) socket.write(trickle[sent++] ?? '')
    }, 100)
  })
  const answer = new Promise<{ text: string, afterMs: number }>((resolve) => {
    socket.once('close', () => {
      clearInterval(timer)
      resolve({ text, afterMs: performance.now() - started })
    })
  })
  return { answer }
}

t.test(`${slowClientsOfEachKind} slow-header and ${slowClientsOfEachKind} slow-body clients get 408 at REQUEST_TIMEOUT, and a normal client is not slowed`, async (t) => {
  const server = await startServer(t, {
    DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, API_TOKENS: token, REQUEST_TIMEOUT: String(requestTimeoutMs),
  })
  const memory = watchMemory(server.child.pid ?? 0)
  const body = JSON.stringify({ id: 1, name: 'Slow fern' })
  const slowHeaders = Array.from({ length: slowClientsOfEachKind }, () =>
    slowClient(server.port, 'POST /plants HTTP/1.1\r\n', `Host: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n`.repeat(20)))
  const slowBodies = Array.from({ length: slowClientsOfEachKind }, () => slowClient(server.port, [
    'POST /plants HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${token}`, 'Content-Type: application/json',
    `Content-Length: ${body.length}`, '', '',
  ].join('\r\n'), body))

  const normalLatencies: number[] = []
  for (let id = 100; id < 120; id++) {
    const started = performance.now()
    const created = await createPlant(server.baseUrl, token, { id, name: 'Normal fern' })
    normalLatencies.push(performance.now() - started)
    t.equal(created.status, 200)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }

  const answers = await Promise.all([...slowHeaders, ...slowBodies].map(async (client) => client.answer))
  const { peakMiB } = memory.stop()
  const timedOut = answers.filter(({ text }) => /^HTTP\/1\.1 408 /.test(text) && text.includes('"error":40801'))
  const latest = Math.max(...answers.map(({ afterMs }) => afterMs))
  const slowestNormal = Math.max(...normalLatencies)
  t.comment(`408s: ${timedOut.length} of ${answers.length}; last cut after ${latest.toFixed(0)} ms; slowest normal create ${slowestNormal.toFixed(1)} ms; peak RSS ${peakMiB.toFixed(0)} MiB`)
  t.equal(timedOut.length, answers.length, 'every slow client got a 408 with the Error body')
  // Node looks for expired requests once a second (connectionsCheckingInterval).
  t.ok(latest < requestTimeoutMs + 2500, `all were cut within REQUEST_TIMEOUT plus the checking interval (${latest.toFixed(0)} ms)`)
  t.ok(slowestNormal < 1000, `a normal client was served throughout (slowest create ${slowestNormal.toFixed(1)} ms)`)
})
