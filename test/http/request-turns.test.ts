import t from 'tap'
import { type RequestKind, RequestTurn } from '../../src/http/request-turns.js'

// What a request's handler waits for, by what the requests read before it on its connection
// have done (src/http/request-turns.ts).

const goesAtOnce = (turn: RequestTurn, kind: RequestKind): boolean => turn.waitFor(kind) === undefined

t.test('a request alone on its connection, or behind requests answered, goes at once', async (t) => {
  const first = new RequestTurn(undefined)
  for (const kind of ['write', 'read', 'other'] as const) t.ok(goesAtOnce(first, kind), kind)
  first.done()
  const second = new RequestTurn(first)
  for (const kind of ['write', 'read', 'other'] as const) t.ok(goesAtOnce(second, kind), `${kind} behind one answered`)
})

// A write's handler begins by handing its write to the store's queue: once it has run up to its
// first await (began), the write is queued.
t.test('a write goes once the write before it is queued; a read and anything else once it is done', async (t) => {
  const write = new RequestTurn(undefined)
  const behind = new RequestTurn(write)
  t.notOk(goesAtOnce(behind, 'write'), 'a write waits while the write before it is not queued')
  const order: string[] = []
  const writeGoes = behind.waitFor('write')!.then(() => order.push('write'))
  const readGoes = behind.waitFor('read')!.then(() => order.push('read'))
  const otherGoes = behind.waitFor('other')!.then(() => order.push('other'))
  write.began('write')
  await writeGoes
  t.same(order, ['write'], 'queued: the write goes, the read and the other wait')
  write.done()
  await Promise.all([readGoes, otherGoes])
  t.same(order, ['write', 'read', 'other'])
})

t.test('a read goes once the read before it has begun; a write once it is done', async (t) => {
  const read = new RequestTurn(undefined)
  const behind = new RequestTurn(read)
  t.notOk(goesAtOnce(behind, 'read'), 'a read waits until the read before it has begun')
  read.began('read')
  t.ok(goesAtOnce(behind, 'read'), 'reads go together')
  t.notOk(goesAtOnce(behind, 'write'), 'a write waits for the read before it to be done')
  read.done()
  t.ok(goesAtOnce(behind, 'write'))
})

t.test('what a request waits for passes through the requests between, answered or not', async (t) => {
  const write = new RequestTurn(undefined)
  const refused = new RequestTurn(write) // answered without its handler: a 400, say
  const read = new RequestTurn(refused)
  refused.done()
  t.notOk(goesAtOnce(read, 'read'), 'a read waits for a write two requests before it')
  write.began('write')
  t.notOk(goesAtOnce(read, 'read'), 'queued is not done')
  const readGoes = read.waitFor('read')
  write.done()
  await readGoes
  t.ok(goesAtOnce(read, 'read'))
})

t.test('a long chain of requests waiting on each other is told in one pass, without a deep stack', async (t) => {
  const first = new RequestTurn(undefined)
  first.began('write')
  let last = first
  const turns: RequestTurn[] = []
  for (let index = 0; index < 20_000; index++) {
    last = new RequestTurn(last)
    turns.push(last)
  }
  const readGoes = last.waitFor('read')
  t.ok(readGoes !== undefined, 'the last read waits for the first write')
  for (const turn of turns) turn.done()
  t.notOk(goesAtOnce(last, 'read'), 'the requests between answered, the write is still not')
  first.done()
  await readGoes
  t.ok(goesAtOnce(last, 'read'), 'the first write answered, the last read goes')
})
