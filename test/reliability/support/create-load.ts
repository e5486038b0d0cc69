import type { Agent } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { keepAliveAgent, type Outcome, sendCreate } from './plant-requests.js'
import type { PlantLedger } from './plant-ledger.js'

export type LoadCounts = Record<'sent' | Outcome, number>

// A client that was refused waits this long before its next create: less than the Retry-After
// of 1 s, so that an outage still sees traffic, but no busy loop of 503s.
const pauseAfterRefusalMs = 100

// Many clients on keep-alive connections, each sending one create after another, until told
// to stop. Every plant goes through the ledger, which registers it before it is sent.
export class CreateLoad {
  readonly counts: LoadCounts = { sent: 0, acknowledged: 0, refused: 0, unknown: 0, unexpected: 0 }
  private requestsInFlight = 0
  private stopping = false
  private readonly agent: Agent
  private readonly clients: Array<Promise<void>>

  constructor (
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly ledger: PlantLedger,
    concurrency: number
  ) {
    this.agent = keepAliveAgent(concurrency)
    this.clients = Array.from({ length: concurrency }, async () => this.client())
  }

  // Requests sent and not yet answered, nor failed.
  get inFlight (): number {
    return this.requestsInFlight
  }

  // Resolves once `total` creates have been acknowledged since the load began.
  async acknowledged (total: number, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (this.counts.acknowledged < total) {
      if (Date.now() > deadline) {
        throw new Error(`${this.counts.acknowledged} of ${total} creates acknowledged after ${timeoutMs} ms: ${JSON.stringify(this.counts)}`)
      }
      await sleep(10)
    }
  }

  // No client sends another create; the requests in flight go on.
  stopSending (): void {
    this.stopping = true
  }

  // Resolves once every client has stopped and every request in flight has its outcome.
  async finished (): Promise<void> {
    this.stopSending()
    await Promise.all(this.clients)
    this.agent.destroy()
  }

  private async client (): Promise<void> {
    while (!this.stopping) {
      const plant = this.ledger.nextPlant()
      this.counts.sent++
      this.requestsInFlight++
      const answer = await sendCreate(this.agent, this.baseUrl, this.token, plant)
      this.requestsInFlight--
      const outcome = this.ledger.record(plant, answer)
      this.counts[outcome]++
      if (outcome === 'refused') await sleep(pauseAfterRefusalMs)
    }
  }
}
