import { once } from 'node:events'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { test, type Test } from 'tap'
import { EndpointConnection } from '../../src/webhooks/endpoint-connection.js'
import { EndpointUrlPolicy } from '../../src/endpoint-urls/endpoint-url-policy.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'

const timeoutMs = 1000
const attempt = { headers: { 'webhook-id': 'msg_1' }, body: '{}' }

// A local endpoint that answers with the status its path names and then sends its body a byte
// every 50 ms, for ever: no phase outlasts undici's own timeouts, so only a bound on the whole
// attempt ends it.
async function tricklingEndpoint (t: Test): Promise<URL> {
  const trickles = new Set<NodeJS.Timeout>()
  const server = createServer((request, response: ServerResponse) => {
    request.resume()
    request.on('end', () => {
      response.writeHead(Number(request.url?.slice(1)), { 'content-type': 'text/plain' })
      // The status and headers at once: only the body trickles.
      response.flushHeaders()
      const trickle = setInterval(() => response.write('.'), 50)
      trickles.add(trickle)
      response.on('close', () => clearInterval(trickle))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    for (const trickle of trickles) clearInterval(trickle)
    server.closeAllConnections()
    server.close()
  })
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
}

// Each attempt's time, from its start to its outcome.
async function timed<T> (send: () => Promise<T>): Promise<{ outcome: T, ms: number }> {
  const started = performance.now()
  const outcome = await send()
  return { outcome, ms: performance.now() - started }
}

test('an attempt whose answer never ends is ended after the timeout (at most a fifteenth more), and judged by its status', async (t) => {
  const url = await tricklingEndpoint(t)
  const delivered = new EndpointConnection(new URL('/200', url), new EndpointUrlPolicy('only'), timeoutMs)
  const failed = new EndpointConnection(new URL('/500', url), new EndpointUrlPolicy('only'), timeoutMs)
  t.teardown(async () => Promise.all([delivered.close(), failed.close()]))
  // Several at once, and one started 30 ms later, within the fifteenth of the timeout (67 ms) in
  // which attempts share a deadline: it too has its whole timeout.
  const later = async (): Promise<{ outcome: unknown, ms: number }> => {
    await sleep(30)
    return timed(async () => delivered.send(attempt))
  }
  const attempts = await Promise.all([
    timed(async () => delivered.send(attempt)), timed(async () => delivered.send(attempt)),
    timed(async () => failed.send(attempt)), later(),
  ])
  t.same(attempts.map(({ outcome }) => outcome), [
    { kind: 'delivered' }, { kind: 'delivered' }, { kind: 'failed', reason: 'answered 500' }, { kind: 'delivered' },
  ])
  for (const { ms } of attempts) {
    t.ok(ms >= timeoutMs - 5 && ms < timeoutMs * 16 / 15 + 1000, `ended after ${ms.toFixed(0)} ms`)
  }
})

test('attempts that end in time leave no listener behind to warn of a leak', async (t) => {
  const receiver = await startWebhookReceiver(t)
  const connection = new EndpointConnection(new URL('/hook', receiver.url), new EndpointUrlPolicy('only'), 15_000)
  t.teardown(async () => connection.close())
  const warnings: Error[] = []
  const onWarning = (warning: Error): void => { warnings.push(warning) }
  process.on('warning', onWarning)
  t.teardown(() => process.off('warning', onWarning))
  // Sixteen in flight at a time, as the dispatcher allows, 208 attempts on one deadline.
  for (let round = 0; round < 13; round++) {
    const outcomes = await Promise.all(Array.from({ length: 16 }, async () => connection.send(attempt)))
    t.ok(outcomes.every((outcome) => outcome.kind === 'delivered'), `round ${round} delivered`)
  }
  await new Promise((resolve) => setImmediate(resolve))
  t.same(warnings.map(({ name }) => name), [], 'no MaxListenersExceededWarning')
})

// A local endpoint that answers as `respond` says.
async function endpoint (t: Test, respond: (response: ServerResponse) => void): Promise<URL> {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => respond(response))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`)
}

test('an informational answer is not the answer: a connection lost after one is a failure to send', async (t) => {
  const url = await endpoint(t, (response) => {
    response.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' })
    setTimeout(() => response.socket?.destroy(), 50)
  })
  const connection = new EndpointConnection(url, new EndpointUrlPolicy('only'), timeoutMs)
  t.teardown(async () => connection.close())
  const outcome = await connection.send(attempt)
  t.equal(outcome.kind, 'failed')
  t.match(outcome, { reason: /^could not send/ }, 'not judged as "answered 103"')
})

test('an endpoint that never answers is a failure after the timeout, said in words', async (t) => {
  const url = await endpoint(t, () => undefined)
  const connection = new EndpointConnection(url, new EndpointUrlPolicy('only'), timeoutMs)
  t.teardown(async () => connection.close())
  t.same(await connection.send(attempt), { kind: 'failed', reason: 'timed out after 1 second' })
})

test('an answer whose body never stops is cut short and judged by its status', async (t) => {
  const chunk = Buffer.alloc(64 * 1024, 'x')
  const url = await endpoint(t, (response) => {
    response.writeHead(200, { 'content-type': 'text/plain' })
    // As fast as the connection takes it, for ever (until the attempt closes it).
    const pour = (): void => {
      while (!response.destroyed && response.write(chunk));
      if (!response.destroyed) response.once('drain', pour)
    }
    pour()
  })
  const connection = new EndpointConnection(url, new EndpointUrlPolicy('only'), 15_000)
  t.teardown(async () => connection.close())
  const { outcome, ms } = await timed(async () => connection.send(attempt))
  t.same(outcome, { kind: 'delivered' })
  t.ok(ms < 5000, `ended after ${ms.toFixed(0)} ms, long before the timeout`)
})

test('a Retry-After beyond thirty days, in seconds or as a date, is held to thirty days', async (t) => {
  const answers = [
    { status: 503, headers: { 'retry-after': '99999999999999999999' } },
    { status: 429, headers: { 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' } },
    { status: 503, headers: { 'retry-after': '120' } },
  ]
  let next = 0
  const receiver = await startWebhookReceiver(t, () => answers[next++]!)
  const connection = new EndpointConnection(new URL('/hook', receiver.url), new EndpointUrlPolicy('only'), 15_000)
  t.teardown(async () => connection.close())
  const waits: unknown[] = []
  for (let index = 0; index < answers.length; index++) {
    const outcome = await connection.send(attempt)
    waits.push('retryAfterMs' in outcome ? outcome.retryAfterMs : undefined)
  }
  t.same(waits, [30 * 86_400_000, 30 * 86_400_000, 120_000])
})
