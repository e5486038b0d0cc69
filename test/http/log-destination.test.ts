import { spawnSync } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import { createTurnBufferedDestination, type WriteBytes } from '../../src/http/log-destination.js'
import { testFolder } from '../support/test-folder.js'

// A standard output that takes what `accept` says it takes of each write, and records it.
function fakeOutput (accept: (bytes: Uint8Array, call: number) => number | NodeJS.ErrnoException): { written: string[], writeBytes: WriteBytes } {
  const written: string[] = []
  let calls = 0
  return {
    written,
    writeBytes: (_fd, bytes) => {
      const taken = accept(bytes, ++calls)
      if (taken instanceof Error) throw taken
      written.push(Buffer.from(bytes.subarray(0, taken)).toString())
      return taken
    },
  }
}
const failure = (code: string): NodeJS.ErrnoException => Object.assign(new Error(code), { code })

t.test('the lines of one turn of the event loop are written in one write, at its end', async (t) => {
  const output = fakeOutput((bytes) => bytes.length)
  const destination = createTurnBufferedDestination(1, output.writeBytes)
  destination.write('{"n":1}\n')
  destination.write('{"n":2}\n')
  t.same(output.written, [], 'nothing written during the turn')
  await nextTurn()
  await nextTurn()
  t.same(output.written, ['{"n":1}\n{"n":2}\n'], 'both lines, in order, in one write')
  destination.write('{"n":3}\n')
  await nextTurn()
  await nextTurn()
  t.same(output.written, ['{"n":1}\n{"n":2}\n', '{"n":3}\n'], 'a later turn has a write of its own')
})

t.test('flush writes the waiting lines at once', async (t) => {
  const output = fakeOutput((bytes) => bytes.length)
  const destination = createTurnBufferedDestination(1, output.writeBytes)
  destination.write('{"n":1}\n')
  destination.flush()
  t.same(output.written, ['{"n":1}\n'])
})

t.test('a partial write, and a standard output that is full for a moment, lose nothing', async (t) => {
  const output = fakeOutput((bytes, call) => call === 1 ? 3 : call === 2 ? failure('EAGAIN') : bytes.length)
  const destination = createTurnBufferedDestination(1, output.writeBytes)
  destination.write('{"n":1}\n')
  destination.write('{"n":2}\n')
  destination.flush()
  t.equal(output.written.join(''), '{"n":1}\n{"n":2}\n')
})

t.test('a standard output that does not drain holds the service back a moment per turn, then its lines are dropped and counted', async (t) => {
  let draining = false
  let attempts = 0
  const output = fakeOutput((bytes) => {
    attempts++
    return draining ? bytes.length : failure('EAGAIN')
  })
  const destination = createTurnBufferedDestination(1, output.writeBytes)
  const started = Date.now()
  destination.write('{"n":1}\n')
  destination.flush()
  t.ok(Date.now() - started < 1000, `the flush gave up after a short time (${Date.now() - started} ms)`)
  // Counted, not timed: a pause of the machine must not fail the test.
  const attemptsBefore = attempts
  destination.flush()
  t.equal(attempts - attemptsBefore, 1, 'once behind, a flush tries once, without waiting')
  const line = `${'x'.repeat(1023)}\n`
  for (let index = 0; index < 17 * 1024; index++) destination.write(line)
  draining = true
  destination.flush()
  const text = output.written.join('')
  t.match(text, /^\{"level":40,"time":\d+,"msg":"\d+ log lines were dropped: standard output did not drain"\}\n/, 'the loss is said first')
  t.ok(text.length <= 16 * 1024 * 1024 + 200, 'what waited stayed within its bound')
  t.ok(text.endsWith(line), 'the latest lines are kept')
})

t.test('a standard output that is gone drops the lines, not the service', async (t) => {
  const output = fakeOutput(() => failure('EPIPE'))
  const destination = createTurnBufferedDestination(1, output.writeBytes)
  destination.write('{"n":1}\n')
  t.doesNotThrow(() => destination.flush())
})

t.test('lines logged just before the process exits are written', async (t) => {
  const file = join(testFolder(t), 'log')
  // The built module, as the service runs it (npm test builds first).
  const module = new URL('../../dist/src/http/log-destination.js', import.meta.url).href
  const script = `import { openSync } from 'node:fs'
    const { createTurnBufferedDestination } = await import(${JSON.stringify(module)})
    const destination = createTurnBufferedDestination(openSync(${JSON.stringify(file)}, 'w'))
    destination.write('last words\\n')
    process.on('exit', () => destination.write('after the last flush\\n'))
    process.exit(3)`
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' })
  t.equal(child.status, 3, 'the process exited as it was told')
  t.equal(readFileSync(file, 'utf8'), 'last words\nafter the last flush\n')
})

t.test('a real file gets the lines', async (t) => {
  const file = join(testFolder(t), 'log')
  const fd = openSync(file, 'w')
  t.teardown(() => closeSync(fd))
  const destination = createTurnBufferedDestination(fd)
  destination.write('{"n":1}\n')
  await nextTurn()
  await nextTurn()
  t.equal(readFileSync(file, 'utf8'), '{"n":1}\n')
})
