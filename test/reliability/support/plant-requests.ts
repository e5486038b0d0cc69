import { Agent, type IncomingHttpHeaders, request } from 'node:http'
import { isDeepStrictEqual } from 'node:util'

export interface Plant {
  readonly id: bigint
  readonly name: string
  readonly tag?: string
}

// The whole answer to one request, or what went wrong before a whole answer arrived.
export type Answer = { readonly status: number, readonly body: string } | { readonly error: string }

// What one create came to, as its client saw it. Acknowledged: 200 with the plant, a promise
// that it is stored. Refused: the 503 the spec declares for a store that is unavailable, which
// promises nothing. Unknown: no whole answer (the connection failed or was cut), so the plant
// may or may not be stored. Unexpected: anything else, which these tests never provoke.
export type Outcome = 'acknowledged' | 'refused' | 'unknown' | 'unexpected'

// Longer than any answer the service may take (a PostgreSQL statement times out after 5 s), so
// a request still unanswered by then is one the service lost.
const answerTimeoutMs = 15_000

// Written by hand: JSON.stringify cannot write a bigint, and the tests' ids are beyond 2^53.
export function plantJson ({ id, name, tag }: Plant): string {
  const tagMember = tag === undefined ? '' : `,"tag":${JSON.stringify(tag)}`
  return `{"id":${id},"name":${JSON.stringify(name)}${tagMember}}`
}

export function outcomeOf (plant: Plant, answer: Answer): Outcome {
  if ('error' in answer) return 'unknown'
  if (answer.status === 503) return 'refused'
  return answer.status === 200 && isThePlant(plant, answer.body) ? 'acknowledged' : 'unexpected'
}

export function describeAnswer (answer: Answer): string {
  return 'error' in answer ? answer.error : `${answer.status} ${answer.body}`
}

// The 200 body is the stored Plant: its name and tag, not its id.
function isThePlant ({ name, tag }: Plant, body: string): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(body), tag === undefined ? { name } : { name, tag })
  } catch {
    return false
  }
}

// Keep-alive connections, as a real client pool keeps them, at most `connections` of them.
export function keepAliveAgent (connections: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: connections })
}

// POST /plants over one of the agent's connections. Never rejects: a failure is an answer too.
export async function sendCreate (agent: Agent, baseUrl: string, token: string, plant: Plant): Promise<Answer> {
  const body = plantJson(plant)
  return new Promise<Answer>((resolve) => {
    const creating = request(`${baseUrl}/plants`, {
      method: 'POST',
      agent,
      timeout: answerTimeoutMs,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
    }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => { text += chunk })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }))
      response.on('error', (error) => resolve({ error: `the answer was cut off: ${error.message}` }))
    })
    creating.on('timeout', () => creating.destroy(new Error(`no answer within ${answerTimeoutMs} ms`)))
    creating.on('error', (error) => resolve({ error: error.message }))
    creating.end(body)
  })
}

// Sends every plant, at most `concurrency` at a time, and answers in the order of `plants`.
export async function sendEach (baseUrl: string, token: string, plants: readonly Plant[], concurrency: number): Promise<Answer[]> {
  const agent = keepAliveAgent(concurrency)
  const answers: Answer[] = []
  let next = 0
  const client = async (): Promise<void> => {
    while (next < plants.length) {
      const index = next++
      answers[index] = await sendCreate(agent, baseUrl, token, plants[index]!)
    }
  }
  try {
    await Promise.all(Array.from({ length: concurrency }, client))
    return answers
  } finally {
    agent.destroy()
  }
}

// POST /plants from a chosen local address (all of 127.0.0.0/8 is this machine), for tests that
// tell clients apart by their address. Rejects when the connection fails.
export async function postFrom (
  localAddress: string, port: number, bearer: string, body: string, agent?: Agent
): Promise<{ readonly status: number, readonly headers: IncomingHttpHeaders }> {
  const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, localAddress, path: '/plants', method: 'POST', headers, ...(agent === undefined ? {} : { agent }) }, (response) => {
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }))
    })
    sent.on('error', reject)
    sent.end(body)
  })
}
