import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { ActiveWriters, type Writer } from '../../src/http/active-writers.js'
import { GroupCommit } from '../../src/store/group-commit.js'

// The batching alone, with a commit function that records what it was given: which writes
// share a batch, in which order, and what each caller is told. Its active writers are counted
// as the request path counts them.
function recordingGroupCommit (options: {
  maxBatchSize?: number, maxGatherRounds?: number, gatherForWritersMs?: number, activeWriterWindowMs?: number, commitMs?: number
} = {}) {
  const batches: number[][] = []
  const failNext: unknown[] = []
  let committing = 0
  let mostAtOnce = 0
  const writers = new ActiveWriters(options.activeWriterWindowMs ?? 10)
  const groupCommit = new GroupCommit<number, string>(async (items) => {
    batches.push([...items])
    committing++
    mostAtOnce = Math.max(mostAtOnce, committing)
    try {
      await sleep(options.commitMs ?? 5)
      const failure = failNext.shift()
      if (failure !== undefined) throw failure
      if (items.includes(-1)) throw new Error('write -1 is refused')
      return items.map((item) => `committed ${item}`)
    } finally {
      committing--
    }
  }, {
    maxBatchSize: options.maxBatchSize ?? 100,
    maxGatherRounds: options.maxGatherRounds ?? 1,
    gatherForWritersMs: options.gatherForWritersMs ?? 0,
    activeWriters: writers.countNow,
    isolateFailure: (error) => error instanceof Error && error.message === 'write -1 is refused',
  })
  // A write of a request that came on the writer's connection.
  const submitFrom = (writer: Writer, item: number): Promise<string> => {
    writers.wrote(writer)
    return groupCommit.submit(item)
  }
  return { groupCommit, submitFrom, batches, failNext, mostAtOnce: () => mostAtOnce }
}

const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, index) => from + index)
const rounds = async (count: number): Promise<void> => {
  for (let round = 0; round < count; round++) await new Promise((resolve) => setImmediate(resolve))
}

t.test('writes submitted together share one batch; writes arriving during its commit form the next', async (t) => {
  const { groupCommit, batches } = recordingGroupCommit({ commitMs: 30 })
  const first = range(1, 5).map((item) => groupCommit.submit(item))
  // Once the first batch is committing (waiting on a timer would race a busy machine).
  while (batches.length === 0) await new Promise((resolve) => setImmediate(resolve))
  const second = range(6, 3).map((item) => groupCommit.submit(item))
  t.same(await Promise.all([...first, ...second]), range(1, 8).map((item) => `committed ${item}`), 'each caller gets its own outcome')
  t.same(batches, [[1, 2, 3, 4, 5], [6, 7, 8]])
})

t.test('while writes keep arriving, a batch waits for them, a few rounds of the event loop at most', async (t) => {
  const { groupCommit, batches } = recordingGroupCommit({ maxGatherRounds: 3 })
  const nextRound = async (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
  // Two arrive in one round, then one in each round after: the batch gathers while they come.
  const writes = [groupCommit.submit(1), groupCommit.submit(2)]
  for (const item of [3, 4, 5]) {
    await nextRound()
    writes.push(groupCommit.submit(item))
  }
  await Promise.all(writes)
  t.same(batches, [[1, 2, 3, 4], [5]], 'the writes of three rounds share a batch; a later one forms the next')

  const alone = recordingGroupCommit({ maxGatherRounds: 3 })
  const lonely = alone.groupCommit.submit(1)
  await nextRound()
  await nextRound()
  t.same(alone.batches, [[1]], 'a write with none arriving after it is not kept waiting')
  await lonely
})

t.test('a batch waits a moment for the writes of other connections writing, and never for a lone one', async (t) => {
  // Wide enough that a busy machine's pauses between these steps do not end a writer's activity.
  const gatherForWritersMs = 300
  const activeWriterWindowMs = 200
  const { groupCommit, submitFrom, batches } = recordingGroupCommit({ gatherForWritersMs, activeWriterWindowMs, commitMs: 1 })
  const first = { destroyed: false }
  const second = { destroyed: false }

  const lone = submitFrom(first, 1)
  await rounds(5)
  t.same(batches, [[1]], "a lone writer's write is committed without waiting")
  await lone

  // Both write: from now on each waits for the other, until the other's write comes.
  await Promise.all([submitFrom(first, 2), submitFrom(second, 3)])
  const waiting = submitFrom(first, 4)
  await rounds(5)
  t.same(batches, [[1], [2, 3]], 'a write waits while another writer is writing')
  const unnamed = groupCommit.submit(5)
  await rounds(5)
  t.same(batches, [[1], [2, 3], [4, 5]], 'a write of no connection counts among those waiting: the batch starts')
  await Promise.all([waiting, unnamed])
  const waitingAgain = submitFrom(first, 6)
  await rounds(5)
  t.same(batches.at(-1), [4, 5], 'a write waits again for the other writer')
  const joined = submitFrom(second, 7)
  await rounds(5)
  t.same(batches.at(-1), [6, 7], "the batch starts as soon as the other writer's write has come")
  await Promise.all([waitingAgain, joined])

  // The other writer writes no more: the wait ends after gatherForWritersMs.
  const started = performance.now()
  await submitFrom(first, 8)
  t.ok(performance.now() - started >= gatherForWritersMs - 5, 'a write waits for a writer that writes no more, for a moment only')
  t.same(batches.at(-1), [8])

  // A writer whose connection has closed is not waited for.
  await submitFrom(second, 9)
  second.destroyed = true
  const afterClose = submitFrom(first, 10)
  await rounds(5)
  t.same(batches.at(-1), [10], 'a closed connection is not waited for')
  await afterClose

  // A writer that has not written for two windows is no longer waited for.
  const third = { destroyed: false }
  await submitFrom(third, 11)
  await sleep(2 * activeWriterWindowMs + 50)
  const alone = submitFrom(first, 12)
  await rounds(5)
  t.same(batches.at(-1), [12], 'once the other writer has been quiet, a write is committed without waiting')
  await alone
  await groupCommit.idle()
})

t.test('a caller is answered only once its batch has committed', async (t) => {
  const { groupCommit, batches } = recordingGroupCommit({ commitMs: 30 })
  let answered = false
  const write = groupCommit.submit(1).then((outcome) => { answered = true; return outcome })
  while (batches.length === 0) await new Promise((resolve) => setImmediate(resolve))
  t.same(batches, [[1]], 'the batch is committing')
  t.notOk(answered, 'and its caller is still waiting')
  t.equal(await write, 'committed 1')
})

t.test('under load, batches are taken in arrival order, never larger than the limit, and no one is overtaken', async (t) => {
  const { groupCommit, batches } = recordingGroupCommit({ maxBatchSize: 64, commitMs: 2 })
  const answeredInOrder: number[] = []
  const flood = range(1, 1000).map((item) => groupCommit.submit(item).then(() => answeredInOrder.push(item)))
  await sleep(5)
  // A caller arriving while the flood is being committed waits for the batches before it only.
  const late = groupCommit.submit(5000).then(() => answeredInOrder.push(5000))
  await Promise.all([...flood, late])
  t.ok(batches.every((batch) => batch.length <= 64), 'no batch is over 64 writes')
  t.same(batches.flat(), [...range(1, 1000), 5000], 'every write committed once, in arrival order')
  t.same(answeredInOrder, [...range(1, 1000), 5000], 'answers come in arrival order')
  t.ok(batches.length <= Math.ceil(1001 / 64) + 1, `${batches.length} commits for 1001 writes`)
})

t.test('a failed batch fails each of its callers, and the next batch is unaffected', async (t) => {
  const { groupCommit, failNext } = recordingGroupCommit({ commitMs: 10 })
  const outage = new Error('the disk is full')
  failNext.push(outage)
  const failed = range(1, 4).map((item) => groupCommit.submit(item))
  const results = await Promise.allSettled(failed)
  t.same(results.map((result) => result.status === 'rejected' ? result.reason : result.value), [outage, outage, outage, outage])
  t.equal(await groupCommit.submit(9), 'committed 9', 'the next write commits')
})

t.test('a failure that may be one write\'s own is isolated: its neighbours get their true outcomes', async (t) => {
  const { groupCommit, batches } = recordingGroupCommit()
  const results = await Promise.allSettled([1, -1, 2].map((item) => groupCommit.submit(item)))
  t.same(results.map((result) => result.status === 'fulfilled' ? result.value : (result.reason as Error).message),
    ['committed 1', 'write -1 is refused', 'committed 2'])
  t.same(batches, [[1, -1, 2], [1], [-1], [2]], 'the batch failed whole, then each write was committed alone')
})

t.test('a commit that answers for the wrong number of writes fails them all, and is not retried', async (t) => {
  let commits = 0
  const groupCommit = new GroupCommit<number, string>(async () => { commits++; return ['only one'] },
    { maxBatchSize: 10, maxGatherRounds: 1, isolateFailure: () => true })
  const results = await Promise.allSettled([1, 2].map((item) => groupCommit.submit(item)))
  t.ok(results.every((result) => result.status === 'rejected'))
  t.equal(commits, 1, 'a batch that committed is never committed again')
})

t.test('when retrying one by one meets a failure of the store, the writes left get it without being tried', async (t) => {
  const outage = new Error('the disk is full')
  const tried: number[][] = []
  const groupCommit = new GroupCommit<number, string>(async (items) => {
    tried.push([...items])
    if (items.length > 1) throw new Error('write 2 is refused')
    if (items[0] === 2) throw new Error('write 2 is refused')
    if (items[0] === 3) throw outage
    return items.map((item) => `committed ${item}`)
  }, { maxBatchSize: 10, maxGatherRounds: 1, isolateFailure: (error) => error !== outage })
  const results = await Promise.allSettled([1, 2, 3, 4, 5].map((item) => groupCommit.submit(item)))
  t.same(results.map((result) => result.status === 'fulfilled' ? result.value : (result.reason as Error).message),
    ['committed 1', 'write 2 is refused', 'the disk is full', 'the disk is full', 'the disk is full'])
  t.same(tried, [[1, 2, 3, 4, 5], [1], [2], [3]])
})

t.test('whatever throws while a failure is handled, every caller is answered and nothing is left unhandled', async (t) => {
  const groupCommit = new GroupCommit<number, string>(async () => { throw new Error('failed') }, {
    maxBatchSize: 10,
    maxGatherRounds: 1,
    isolateFailure: () => { throw new Error('the failure could not be judged') },
  })
  const results = await Promise.allSettled([1, 2].map((item) => groupCommit.submit(item)))
  t.same(results.map((result) => result.status === 'rejected' && (result.reason as Error).message),
    ['the failure could not be judged', 'the failure could not be judged'])
  await groupCommit.idle()
})

t.test('one batch commits at a time, however many wait', async (t) => {
  const { groupCommit, batches, mostAtOnce } = recordingGroupCommit({ maxBatchSize: 2, commitMs: 20 })
  await Promise.all(range(1, 20).map((item) => groupCommit.submit(item)))
  t.equal(batches.length, 10)
  t.equal(mostAtOnce(), 1)
})

t.test('idle() waits for queued and committing writes', async (t) => {
  const { groupCommit } = recordingGroupCommit({ commitMs: 20 })
  let committed = 0
  for (const item of range(1, 3)) void groupCommit.submit(item).then(() => committed++)
  await groupCommit.idle()
  t.equal(committed, 3)
  await groupCommit.idle()
})

t.test('an observer that throws changes nothing of what a batch comes to: each write is committed once', async (t) => {
  const committed: number[][] = []
  const groupCommit = new GroupCommit<number, string>(async (items) => {
    committed.push([...items])
    return items.map((item) => `committed ${item}`)
  }, {
    maxBatchSize: 100,
    maxGatherRounds: 1,
    isolateFailure: () => true,
    observer: {
      writeQueued: () => { throw new Error('queued') },
      batchStarted: () => () => { throw new Error('ended') },
    },
  })
  t.same(await Promise.all([groupCommit.submit(1), groupCommit.submit(2)]), ['committed 1', 'committed 2'])
  t.same(committed, [[1, 2]], 'one batch, not retried one write at a time')
})
