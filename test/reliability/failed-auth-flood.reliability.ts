import { Agent } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startServer } from '../support/running-server.js'
import { postFrom } from './support/plant-requests.js'
import { watchMemory } from './support/process-memory.js'
import { testFolder } from '../support/test-folder.js'

// A password-guessing loop: 20,000 requests with wrong tokens from one address. Before rate
// limits they were all answered, at about 6,600 a second, with no slow-down of any kind.
const token = 'reliability-flood-token-0123456789'
const guesses = 20_000
const concurrency = 32
const failedAuthLimit = 30
// Windows start at multiples of their length: with a day's window, and a flood started more than
// two minutes before one ends, no window ends during the test, whatever the time of day. (With
// the default minute, a window that ended mid-flood let the right token through 30 guesses later.)
const windowSeconds = 86_400
const windowMarginMs = 2 * 60_000

async function post (agent: Agent, port: number, localAddress: string, bearer: string, id: number): Promise<{ status: number, retryAfter: string | undefined }> {
  const { status, headers } = await postFrom(localAddress, port, bearer, JSON.stringify({ id, name: 'Guess' }), agent)
  return { status, retryAfter: headers['retry-after'] }
}

t.test(`${guesses} wrong tokens from one address are stopped after RATE_LIMIT_FAILED_AUTH; other addresses are not`, async (t) => {
  const untilWindowEnds = windowSeconds * 1000 - (Date.now() % (windowSeconds * 1000))
  if (untilWindowEnds < windowMarginMs) await sleep(untilWindowEnds + 1000)
  const server = await startServer(t, {
    DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`,
    API_TOKENS: token,
    RATE_LIMIT_FAILED_AUTH: String(failedAuthLimit),
    RATE_LIMIT_WINDOW: String(windowSeconds),
    LOG_LEVEL: 'info',
  })
  const memory = watchMemory(server.child.pid ?? 0)
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency * 2 })
  t.teardown(() => agent.destroy())

  const attackerStatuses = new Map<number, number>()
  let sent = 0
  const started = performance.now()
  const attacker = async (): Promise<void> => {
    while (sent < guesses) {
      sent += 1
      // Now and then the guess is right: by then the address is stopped, so it must not pass.
      const guess = sent % 1000 === 0 ? token : `guess-${sent}`
      const { status } = await post(agent, server.port, '127.0.0.1', guess, sent)
      attackerStatuses.set(status, (attackerStatuses.get(status) ?? 0) + 1)
    }
  }
  const flood = Promise.all(Array.from({ length: concurrency }, attacker))

  // Meanwhile, a client with its token on another address, and one that mistypes its token once.
  const neighbourStatuses: number[] = []
  for (let id = 1; id <= 20; id++) {
    neighbourStatuses.push((await post(agent, server.port, '127.0.0.2', token, id)).status)
  }
  const typo = await post(agent, server.port, '127.0.0.3', 'mistyped-token', 100)
  await flood
  const elapsedS = (performance.now() - started) / 1000
  const { peakMiB } = memory.stop()

  const refused = attackerStatuses.get(429) ?? 0
  const unauthorized = attackerStatuses.get(401) ?? 0
  t.comment(`attacker: ${JSON.stringify(Object.fromEntries(attackerStatuses))} in ${elapsedS.toFixed(1)} s; neighbour: ${neighbourStatuses.join(',')}; peak RSS ${peakMiB.toFixed(0)} MiB`)
  t.ok(unauthorized <= failedAuthLimit + concurrency, `at most the limit (plus those already in flight) were checked: ${unauthorized} 401s`)
  t.equal(refused + unauthorized, guesses, 'every other guess got a 429, the right token included')
  t.equal(attackerStatuses.get(200) ?? 0, 0, 'no guess got through, not even the right token once the address was stopped')
  t.same(neighbourStatuses, Array(20).fill(200), 'a client on another address is served throughout')
  t.equal(typo.status, 401, 'another address with a wrong token gets its own 401, not the attacker\'s 429')

  const last = await post(agent, server.port, '127.0.0.1', token, guesses + 1)
  t.equal(last.status, 429, 'the attacking address stays stopped until its window ends')
  t.ok(Number(last.retryAfter) >= 1, `with Retry-After (${last.retryAfter})`)
})
