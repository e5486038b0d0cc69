import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { prefillSqliteStore } from './prefilled-store.js'
import { type BenchRequest, runSteadyLoad } from './load.js'
import { percentileOf } from './percentile.js'
import { type ServerProcess, startServerProcess } from './server-process.js'

// The webhooks' part of `npm run bench`: creates with one endpoint subscribed (a receiver in a
// process of its own answering 200 at once), the delay from commit to receipt at a steady rate,
// creates while a receiver is down with a million messages waiting, and the drain of that
// backlog once the receiver is back.

export const receiverScript = join(import.meta.dirname, 'webhook-receiver.js')
export const backlogSize = 1_000_000

export interface ReceiverStats {
  readonly received: number
  // The distinct plants the messages told of (at most a million are kept).
  readonly plants: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
}

export async function startReceiver (logFile: string, port?: number): Promise<ServerProcess> {
  return startServerProcess(receiverScript, port === undefined ? {} : { PORT: String(port) }, logFile)
}

export async function receiverStats (receiver: ServerProcess): Promise<ReceiverStats> {
  return await (await fetch(`${receiver.baseUrl}/stats`)).json() as ReceiverStats
}

// Resolves with the endpoint's id.
export async function registerEndpoint (service: ServerProcess, token: string, url: string): Promise<string> {
  const response = await fetch(`${service.baseUrl}/webhook-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  })
  if (response.status !== 201) throw new Error(`registering ${url} got ${response.status}: ${await response.text()}`)
  return (await response.json() as { id: string }).id
}

export async function deleteEndpoint (service: ServerProcess, token: string, id: string): Promise<void> {
  const response = await fetch(`${service.baseUrl}/webhook-endpoints/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })
  if (response.status !== 204) throw new Error(`deleting endpoint ${id} got ${response.status}: ${await response.text()}`)
}

// A SQLite store with one endpoint (at `url`, where nothing answers yet) owed `backlogSize`
// newPlant messages, written with one statement before the service starts. Resolves with the
// seconds it took.
export async function storeBacklog (filename: string, url: string): Promise<number> {
  return prefillSqliteStore(filename, (database) => {
    const now = Date.now()
    database.prepare('INSERT INTO webhook_endpoints (id, url, secret, created_at) VALUES (?, ?, ?, ?)')
      .run('00000000-0000-4000-8000-000000000001', url, `whsec_${Buffer.alloc(32, 7).toString('base64')}`, now)
    database.exec(`INSERT INTO webhook_messages (endpoint_id, message_id, event, plant_id, document, committed_at, next_attempt_at)
      WITH RECURSIVE counter (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM counter WHERE x < ${backlogSize})
      SELECT '00000000-0000-4000-8000-000000000001', printf('msg_%032x', x), 'newPlant', x, '{"name":"Fern","tag":"shade"}', ${now}, ${now}
      FROM counter`)
  })
}

// Waits (up to `limitSeconds`) until the receiver has had `count` messages since its last reset;
// resolves with its last account.
export async function awaitReceived (receiver: ServerProcess, count: number, limitSeconds: number): Promise<ReceiverStats> {
  const started = performance.now()
  let stats = await receiverStats(receiver)
  while (stats.received < count && performance.now() - started < limitSeconds * 1000) {
    await sleep(50)
    stats = await receiverStats(receiver)
  }
  return stats
}

// Creates at a steady `rate` for `seconds`, then the receiver's account of their delays from
// commit, the delays from each create's 200 (as the load generator read it) to its message's
// first receipt, the creates' own p99 (a stall of the service, such as a slow fsync, shows in
// all three), and the service's CPU per create with its delivery (what decides how near that
// rate is to saturation).
export async function measureSteadyRate (
  service: ServerProcess, receiver: ServerProcess, token: string, rate: number, seconds: number, nextRequest: () => BenchRequest
): Promise<ReceiverStats & { sent: number, createsP99Ms: number, cpuMicrosecondsPerCreate: number, fromAnswer: Delays }> {
  await fetch(`${receiver.baseUrl}/reset`, { method: 'POST' })
  const answeredAtByPlantId = new Map<string, number>()
  const onAnswered = ({ body }: BenchRequest, answeredAtMs: number): void => {
    const plantId = body === undefined ? undefined : /"id":(\d+)/.exec(body)?.[1]
    if (plantId !== undefined) answeredAtByPlantId.set(plantId, answeredAtMs)
  }
  const cpuBefore = service.cpuSeconds()
  const result = await runSteadyLoad({ baseUrl: service.baseUrl, token, connections: 16, durationSeconds: seconds, rate, nextRequest, onAnswered })
  // The last ones' deliveries.
  await awaitReceived(receiver, result.responses, 5)
  const cpuMicrosecondsPerCreate = (service.cpuSeconds() - cpuBefore) * 1e6 / Math.max(1, result.responses)
  const receipts = await (await fetch(`${receiver.baseUrl}/receipts`)).json() as Record<string, number>
  const fromAnswer = delaysBetween(answeredAtByPlantId, receipts)
  return { ...await receiverStats(receiver), sent: result.responses, createsP99Ms: result.p99Ms, cpuMicrosecondsPerCreate, fromAnswer }
}

export interface Delays {
  // Plants with both times; a plant answered and never received is missing, not counted as fast.
  readonly matched: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
}

// For each plant with both, the time from the first to the second, in milliseconds.
export function delaysBetween (startedAt: ReadonlyMap<string, number>, endedAt: Readonly<Record<string, number>>): Delays {
  const delays: number[] = []
  for (const [plantId, start] of startedAt) {
    const end = endedAt[plantId]
    if (end !== undefined) delays.push(end - start)
  }
  delays.sort((a, b) => a - b)
  return { matched: delays.length, p50Ms: percentileOf(delays, 0.5), p99Ms: percentileOf(delays, 0.99), maxMs: delays.at(-1) ?? Number.NaN }
}

// Messages a second the receiver gets over `seconds`, once it is back.
export async function measureDrain (receiver: ServerProcess, seconds: number): Promise<number> {
  const before = (await receiverStats(receiver)).received
  await sleep(seconds * 1000)
  return ((await receiverStats(receiver)).received - before) / seconds
}

export interface CatchUp {
  readonly delivered: number
  // Of those, the distinct plants: fewer when a message arrived twice (counted up to a million).
  readonly plants: number
  readonly seconds: number
  readonly cpuSeconds: number
}

// After a run of `created` creates, waits (up to `limitSeconds`) until the receiver has had a
// message for each since its last reset: how long the deliveries took to catch up once the load
// stopped, and the service CPU they used meanwhile. Resets the receiver for the next run.
export async function awaitCatchUp (
  service: ServerProcess, receiver: ServerProcess, created: number, limitSeconds: number
): Promise<CatchUp> {
  const started = performance.now()
  const cpuBefore = service.cpuSeconds()
  const { received: delivered, plants } = await awaitReceived(receiver, created, limitSeconds)
  const catchUp = { delivered, plants, seconds: (performance.now() - started) / 1000, cpuSeconds: service.cpuSeconds() - cpuBefore }
  await fetch(`${receiver.baseUrl}/reset`, { method: 'POST' })
  return catchUp
}

// Waits (up to `limitSeconds`) until the receiver has had nothing for a second, then resets it:
// what a warm-up or an earlier run left on its way is not counted in the next.
export async function awaitQuietReceiver (receiver: ServerProcess, limitSeconds: number): Promise<void> {
  const started = performance.now()
  let last = -1
  let quietSince = performance.now()
  while (performance.now() - started < limitSeconds * 1000 && performance.now() - quietSince < 1000) {
    const { received } = await receiverStats(receiver)
    if (received !== last) {
      last = received
      quietSince = performance.now()
    }
    await sleep(100)
  }
  await fetch(`${receiver.baseUrl}/reset`, { method: 'POST' })
}
