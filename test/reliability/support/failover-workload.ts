import { type Agent, type IncomingHttpHeaders, request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { isDeepStrictEqual } from 'node:util'
import { keepAliveAgent, plantJson } from './plant-requests.js'
import type { SeededRandom } from './seeded-random.js'

// Clients that create, update and delete plants while the database fails over, as Jepsen's
// clients do: each keeps a history of what it asked and what it was told. Every client owns its
// own ids, so the operations on one id come one after another, and each id's history has one
// order. An operation that gets a 503 or no whole answer has an outcome the client does not know;
// the client sends the same request again (creates are idempotent by id, an update to the same
// plant writes nothing, a delete of what is gone is a 404) until it is told, so that every
// operation in the history ends known, and the store must then hold exactly what the history
// says.

export type OperationKind = 'create' | 'update' | 'delete'

// One request and what came of it, with every answer that is not the operation's end.
export interface Attempt {
  readonly sentAt: number
  readonly answeredAt: number
  readonly status: number | undefined
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly error: string | undefined
}

export interface Operation {
  readonly client: number
  readonly kind: OperationKind
  readonly id: bigint
  // The plant's name after a create or update; the name it had, for a delete.
  readonly name: string
  readonly attempts: Attempt[]
  // The moment the service acknowledged it (a 200 or 204, or the 404 that tells that a delete
  // sent before took effect); undefined until it is known.
  acknowledgedAt: number | undefined
  // An answer no history can explain: a 409 to a create of an absent plant, a 404 to an update of
  // a present one, a status the spec does not declare.
  unexpected: string | undefined
}

// Between the attempts of one operation: a client that retries at once would only add load;
// one that waits a full Retry-After (1 s) would hide how soon the service is back.
const retryPauseMs = 100
// Longer than any answer the service may take: a wait for a primary (DATABASE_FAILOVER_WAIT),
// then a connection (2 s) and a statement (5 s).
const answerTimeoutMs = 30_000
// An operation still not known after this long is a service that stopped answering.
const knownWithinMs = 120_000

export interface FailoverWorkloadOptions {
  readonly baseUrl: string
  readonly token: string
  readonly clients: number
  // The ids of client c are firstId + c * idsPerClient, and the idsPerClient after it.
  readonly firstId: bigint
  readonly idsPerClient: number
  // A prefix of every name this workload writes, so that its plants are told from another's.
  readonly namePrefix: string
  // Each client's own choices, so that a seed repeats them whatever the clients' interleaving.
  readonly randomOfClient: (client: number) => SeededRandom
}

export class FailoverWorkload {
  readonly operations: Operation[] = []
  readonly #options: FailoverWorkloadOptions
  readonly #agent: Agent
  #stopping = false
  #sequence = 0
  readonly #clients: Array<Promise<void>>

  constructor (options: FailoverWorkloadOptions) {
    this.#options = options
    this.#agent = keepAliveAgent(options.clients)
    this.#clients = Array.from({ length: options.clients }, async (_, client) => this.#runClient(client))
  }

  // Every id the workload may write.
  ids (): bigint[] {
    const { firstId, clients, idsPerClient } = this.#options
    return Array.from({ length: clients * idsPerClient }, (_, index) => firstId + BigInt(index))
  }

  // What the history says each id holds once every operation is known: its name, or absent.
  expectedStore (): Map<bigint, string> {
    const names = new Map<bigint, string>()
    for (const operation of this.operations) {
      if (operation.acknowledgedAt === undefined) continue
      if (operation.kind === 'delete') names.delete(operation.id)
      else names.set(operation.id, operation.name)
    }
    return names
  }

  // The first acknowledgement of a create sent after the moment, and when it came.
  firstCreateAcknowledgedAfter (moment: number): number | undefined {
    return this.operations
      .filter(({ kind, acknowledgedAt, attempts }) => kind === 'create' && acknowledgedAt !== undefined && attempts.at(-1)!.sentAt >= moment)
      .map(({ acknowledgedAt }) => acknowledgedAt!)
      .sort((a, b) => a - b)[0]
  }

  // The longest time without any acknowledgement that ends after the moment: from the last
  // acknowledgement before it (or the moment) to the next one.
  longestPauseAfter (moment: number): { from: number, to: number } {
    const acknowledged = this.operations.flatMap(({ acknowledgedAt }) => acknowledgedAt ?? []).sort((a, b) => a - b)
    let previous = acknowledged.filter((at) => at <= moment).at(-1) ?? moment
    let longest = { from: previous, to: previous }
    for (const at of acknowledged.filter((at) => at > moment)) {
      if (at - previous > longest.to - longest.from) longest = { from: previous, to: at }
      previous = at
    }
    return longest
  }

  // Stops taking new operations and waits until each client's last one is known.
  async stop (): Promise<void> {
    this.#stopping = true
    await Promise.all(this.#clients)
    this.#agent.destroy()
  }

  async #runClient (client: number): Promise<void> {
    const { firstId, idsPerClient, namePrefix } = this.#options
    const random = this.#options.randomOfClient(client)
    const names = new Map<bigint, string>()
    while (!this.#stopping) {
      const id = firstId + BigInt(client * idsPerClient + random.integer(0, idsPerClient - 1))
      const stored = names.get(id)
      const kind: OperationKind = stored === undefined ? 'create' : random.fraction() < 0.25 ? 'delete' : 'update'
      const name = kind === 'delete' ? stored! : `${namePrefix} ${kind} ${++this.#sequence}`
      const operation: Operation = { client, kind, id, name, attempts: [], acknowledgedAt: undefined, unexpected: undefined }
      this.operations.push(operation)
      await this.#untilKnown(operation)
      if (operation.unexpected !== undefined) return
      if (kind === 'delete') names.delete(id)
      else names.set(id, name)
    }
  }

  async #untilKnown (operation: Operation): Promise<void> {
    const givenUpAt = Date.now() + knownWithinMs
    for (;;) {
      if (Date.now() > givenUpAt) {
        operation.unexpected = `${operation.kind} ${operation.id}: not known after ${knownWithinMs} ms of retries`
        return
      }
      const attempt = await this.#send(operation)
      operation.attempts.push(attempt)
      const verdict = verdictOf(operation, attempt)
      switch (verdict) {
        case 'acknowledged':
          operation.acknowledgedAt = attempt.answeredAt
          return
        case 'unknown':
          await sleep(retryPauseMs)
          break
        case 'unexpected':
          operation.unexpected = `${operation.kind} ${operation.id}: ${attempt.status ?? attempt.error ?? ''} ${attempt.body}`
          return
        default:
          throw new Error(`no verdict ${String(verdict satisfies never)}`)
      }
    }
  }

  async #send ({ kind, id, name }: Operation): Promise<Attempt> {
    const { baseUrl, token } = this.#options
    const [method, path, body] = kind === 'create'
      ? ['POST', '/plants', plantJson({ id, name })]
      : kind === 'update' ? ['PUT', `/plants/${id}`, JSON.stringify({ name })] : ['DELETE', `/plants/${id}`, undefined]
    const headers: Record<string, string | number> = { authorization: `Bearer ${token}` }
    if (body !== undefined) {
      headers['content-type'] = 'application/json'
      headers['content-length'] = Buffer.byteLength(body)
    }
    const sentAt = Date.now()
    return new Promise<Attempt>((resolve) => {
      const failed = (error: Error): void => resolve({ sentAt, answeredAt: Date.now(), status: undefined, headers: {}, body: '', error: error.message })
      const sent = request(`${baseUrl}${path}`, { method, agent: this.#agent, timeout: answerTimeoutMs, headers }, (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => { text += chunk })
        response.on('end', () => resolve({ sentAt, answeredAt: Date.now(), status: response.statusCode, headers: response.headers, body: text, error: undefined }))
        response.on('error', failed)
      })
      sent.on('timeout', () => sent.destroy(new Error(`no answer within ${answerTimeoutMs} ms`)))
      sent.on('error', failed)
      sent.end(body)
    })
  }
}

type Verdict = 'acknowledged' | 'unknown' | 'unexpected'

function verdictOf (operation: Operation, attempt: Attempt): Verdict {
  if (attempt.status === undefined || attempt.status === 503) return 'unknown'
  switch (operation.kind) {
    case 'create':
    case 'update':
      return attempt.status === 200 && isNamed(attempt.body, operation.name) ? 'acknowledged' : 'unexpected'
    case 'delete':
      if (attempt.status === 204) return 'acknowledged'
      // Gone: an attempt before this one, whose answer was lost or a 503, deleted it.
      return attempt.status === 404 && operation.attempts.length > 1 ? 'acknowledged' : 'unexpected'
    default:
      throw new Error(`no operation ${String(operation.kind satisfies never)}`)
  }
}

function isNamed (body: string, name: string): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(body), { name })
  } catch {
    return false
  }
}
