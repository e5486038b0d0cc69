import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t from 'tap'
import { ActiveWriters } from '../../src/http/active-writers.js'

// The moments are given, not read from a clock: each window is 1,000 of them.
t.test('a writer is active for one to two windows after its last write, while its connection is open', async (t) => {
  const writers = new ActiveWriters(1000)
  const first = { destroyed: false }
  const second = { destroyed: false }
  const third = { destroyed: false }
  writers.wrote(first, 0)
  writers.wrote(first, 10)
  t.equal(writers.countUpTo(10, 20), 1, 'a writer that wrote twice counts once')
  writers.wrote(second, 1000)
  t.equal(writers.countUpTo(10, 1500), 2, 'a writer of the window before counts with one of this window')
  writers.wrote(first, 1600)
  t.equal(writers.countUpTo(10, 1700), 2, 'a writer in both windows counts once')
  writers.wrote(third, 1800)
  t.equal(writers.countUpTo(2, 1900), 2, 'counting stops at the limit')
  third.destroyed = true
  t.equal(writers.countUpTo(10, 1900), 2, 'a closed connection does not count')
  t.equal(writers.countUpTo(10, 2500), 2, 'once the window has turned, its writers count through the next one')
  t.equal(writers.countUpTo(10, 4600), 0, 'two windows after the last write, none is active')
  writers.wrote(first, 4700)
  t.equal(writers.countUpTo(10, 4800), 1)
  t.equal(writers.countUpTo(10, 9000), 0, 'nor after several')
})

t.test('once writes stop, the writers are let go without another call', async (t) => {
  setFlagsFromString('--expose-gc')
  const collectGarbage = runInNewContext('gc') as () => void
  const writers = new ActiveWriters(10)
  const connection = new WeakRef((() => {
    const writer = { destroyed: false }
    writers.wrote(writer, performance.now())
    return writer
  })())
  for (let waited = 0; connection.deref() !== undefined && waited < 2000; waited += 20) {
    await sleep(20)
    collectGarbage()
  }
  t.equal(connection.deref(), undefined, 'the connection was collected')
})
