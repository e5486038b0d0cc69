import t, { type Test } from 'tap'
import { checkAgainstSpec, createHeaders, type RawResponse, request, startListening } from './support/raw-http.js'
import { testOnEveryBackend } from './support/test-databases.js'

// Requests pipelined on one connection take effect in the order they were sent, as if each had
// waited for the answer before it (src/http/request-turns.ts): the service works on several at
// once, and a request whose body is still being read must not let the one behind it reach the
// store first. Each sequence is answered as a model that runs the requests one at a time answers
// it, and leaves the store as the model does.

type Step =
  | { readonly method: 'POST', readonly id: number, readonly name: string }
  | { readonly method: 'GET' | 'DELETE', readonly id: number }
  | { readonly method: 'GET', readonly path: '/healthz' | '/plants' }

// What each step answers when the steps run one at a time, and what they leave stored.
function runOneAtATime (steps: readonly Step[], stored: Map<number, string>): Array<{ status: number, name?: string }> {
  return steps.map((step) => {
    if ('path' in step) return { status: 200 }
    const name = stored.get(step.id)
    if (step.method === 'POST') {
      if (name !== undefined && name !== step.name) return { status: 409 }
      stored.set(step.id, step.name)
      return { status: 200, name: step.name }
    }
    if (step.method === 'DELETE') return stored.delete(step.id) ? { status: 204 } : { status: 404 }
    return name === undefined ? { status: 404 } : { status: 200, name }
  })
}

function requestOf (step: Step, last: boolean): string {
  const close: Record<string, string> = last ? { Connection: 'close' } : {}
  if ('path' in step) return request('GET', step.path, createHeaders(close))
  if (step.method !== 'POST') return request(step.method, `/plants/${step.id}`, createHeaders(close))
  const body = JSON.stringify({ id: step.id, name: step.name })
  return request('POST', '/plants', createHeaders({ 'Content-Length': String(body.length), ...close }), body)
}

function pathOf (step: Step): string {
  return 'path' in step ? step.path : step.method === 'POST' ? '/plants' : `/plants/${step.id}`
}

async function sendPipelined (t: Test, open: () => { write: (text: string) => void, received: () => Promise<RawResponse[]> }, steps: readonly Step[]): Promise<RawResponse[]> {
  const client = open()
  client.write(steps.map((step, index) => requestOf(step, index === steps.length - 1)).join(''))
  const responses = await client.received()
  t.equal(responses.length, steps.length, 'every request answered')
  responses.forEach((response, index) => { checkAgainstSpec(t, steps[index]!.method, pathOf(steps[index]!), response) })
  return responses
}

function assertAnsweredAsOneAtATime (t: Test, steps: readonly Step[], responses: readonly RawResponse[], expected: ReturnType<typeof runOneAtATime>): void {
  responses.forEach((response, index) => {
    const { status, name } = expected[index]!
    const step = steps[index]!
    const what = `request ${index + 1}, ${step.method} ${pathOf(step)}`
    t.equal(response.statusCode, status, what)
    if (name !== undefined) t.equal((JSON.parse(response.body) as { name: string }).name, name, `${what}: the plant as stored then`)
  })
}

testOnEveryBackend(t, 'a create refused as a conflict and a delete behind it, pipelined behind other requests, take effect in order', async (t, database) => {
  const { open } = await startListening(t, { DATABASE_URL: database.url })
  const stored = new Map<number, string>()
  const setUp: Step[] = [{ method: 'POST', id: 36, name: 'Fern' }]
  assertAnsweredAsOneAtATime(t, setUp, await sendPipelined(t, open, setUp), runOneAtATime(setUp, stored))
  const steps: Step[] = [
    { method: 'GET', path: '/healthz' },
    { method: 'GET', path: '/healthz' },
    { method: 'POST', id: 36, name: 'Bracken' },
    { method: 'DELETE', id: 36 },
    { method: 'GET', id: 36 },
    { method: 'POST', id: 36, name: 'Aloe' },
    { method: 'GET', id: 36 },
    { method: 'DELETE', id: 36 },
    { method: 'DELETE', id: 36 },
  ]
  assertAnsweredAsOneAtATime(t, steps, await sendPipelined(t, open, steps), runOneAtATime(steps, stored))
  t.same((await database.readStoredPlants()).map(({ id }) => id), [], 'nothing stored, as in the order sent')
})

testOnEveryBackend(t, 'two hundred creates, deletes and reads of a few ids, pipelined in one write, are answered and stored as if sent one at a time', async (t, database) => {
  const { open } = await startListening(t, { DATABASE_URL: database.url })
  // A fixed sequence drawn from a small generator, so that a failure names the same steps again.
  let seed = 26
  const next = (below: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % below }
  const names = ['Fern', 'Aloe', 'Ivy']
  const steps: Step[] = Array.from({ length: 200 }, () => {
    const id = 1 + next(4)
    const choice = next(10)
    if (choice < 4) return { method: 'POST', id, name: names[next(names.length)]! }
    if (choice < 6) return { method: 'DELETE', id }
    if (choice < 9) return { method: 'GET', id }
    return { method: 'GET', path: '/plants' }
  })
  const stored = new Map<number, string>()
  const expected = runOneAtATime(steps, stored)
  assertAnsweredAsOneAtATime(t, steps, await sendPipelined(t, open, steps), expected)
  const left = (await database.readStoredPlants()).map(({ id, name }) => [Number(id), name])
  t.same(left, [...stored].sort(([a], [b]) => a - b), 'the store holds what the requests, one at a time, leave')
})

// The writes behind a create wait only until its write is in the store's queue (the store tells
// the request's turn), not until it is committed: pipelined creates still share a commit.
testOnEveryBackend(t, 'sixteen creates pipelined in one write share their commits', async (t, database) => {
  const { open, app } = await startListening(t, { DATABASE_URL: database.url })
  const batches = async (): Promise<number> => {
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
    const line = text.split('\n').find((candidate) => candidate.startsWith('plant_store_store_batch_size_count{'))
    return Number(line?.split(' ')[1] ?? Number.NaN)
  }
  const before = await batches()
  const steps: Step[] = Array.from({ length: 16 }, (_, index) => ({ method: 'POST', id: 100 + index, name: 'Fern' }))
  assertAnsweredAsOneAtATime(t, steps, await sendPipelined(t, open, steps), runOneAtATime(steps, new Map()))
  const committed = await batches() - before
  // One commit a create would be sixteen; how many they take depends on how many turns of the
  // event loop a slow machine needs to read them all.
  t.ok(committed >= 1 && committed <= 8, `the sixteen creates took ${committed} commits`)
})
