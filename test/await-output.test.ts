import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import t, { type Test } from 'tap'
import { awaitOutput } from './support/await-output.js'

// The helper every test of a process waits with: it must see output as it is written, on either
// stream, and the last words of a process that exits, and give up at once on a process whose
// output has ended without the match. The limits are long and the children outlive them: a
// helper that only looked when its time was up would fail these tests by their time checks.

const longLimitMs = 60_000
// Well under the limit, and well over what a child takes to start on a slow machine.
const promptlyMs = 20_000

function childWriting (t: Test, script: string): { child: ChildProcessWithoutNullStreams, output: () => string } {
  const child = spawn(process.execPath, ['-e', script])
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  t.teardown(() => { child.kill('SIGKILL') })
  return { child, output: () => output }
}

async function closed (child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.stdout.closed && child.stderr.closed && (child.exitCode !== null || child.signalCode !== null)) return
  await new Promise((resolve) => child.once('close', resolve))
}

function assertListenersRemoved (t: Test, child: ChildProcessWithoutNullStreams): void {
  t.equal(child.stdout.listenerCount('data'), 1, 'on stdout, only the test\'s own listener is left')
  t.equal(child.stderr.listenerCount('data'), 1, 'on stderr, only the test\'s own listener is left')
  t.equal(child.listenerCount('close'), 0, 'none is left waiting for the close')
}

const writeLaterForever = (stream: 'stdout' | 'stderr'): string =>
  `setTimeout(() => { process.${stream}.write("ready at port 4242\\n") }, 100); setInterval(() => {}, 1000)`

for (const stream of ['stdout', 'stderr'] as const) {
  t.test(`resolves with the match of output written later on ${stream}, while the process runs on`, async (t) => {
    const { child, output } = childWriting(t, writeLaterForever(stream))
    const started = Date.now()
    const match = await awaitOutput(child, output, /ready at port (\d+)/, 'the child to be ready', longLimitMs)
    t.equal(match[1], '4242')
    t.ok(Date.now() - started < promptlyMs, `as it was written (${Date.now() - started} ms)`)
    assertListenersRemoved(t, child)
  })
}

t.test('sees the last words of a process that exits at once', async (t) => {
  const { child, output } = childWriting(t, 'console.log("done: " + "x".repeat(100000))')
  const match = await awaitOutput(child, output, /done: x{100000}/, 'the last words', longLimitMs)
  t.equal(match[0].length, 100006)
})

t.test('rejects with the output so far, promptly, once the process exits without the match', async (t) => {
  const { child, output } = childWriting(t, 'console.log("something else"); process.exit(3)')
  const started = Date.now()
  await t.rejects(awaitOutput(child, output, /never said/, 'the words', longLimitMs), /waited in vain for the words; its output:\nsomething else\n/)
  t.ok(Date.now() - started < promptlyMs, `at its exit (${Date.now() - started} ms)`)
  assertListenersRemoved(t, child)
})

t.test('a process already gone: resolves when its output matched, rejects at once when not', async (t) => {
  const { child, output } = childWriting(t, 'console.log("said and gone")')
  await closed(child)
  t.same([...await awaitOutput(child, output, /said and (\w+)/, 'the words', longLimitMs)], ['said and gone', 'gone'])
  const started = Date.now()
  await t.rejects(awaitOutput(child, output, /never said/, 'other words', longLimitMs), /waited in vain for other words/)
  t.ok(Date.now() - started < promptlyMs, `at once (${Date.now() - started} ms)`)
  assertListenersRemoved(t, child)
})

t.test('rejects once the time is up', async (t) => {
  const { child, output } = childWriting(t, 'console.log("waiting"); setTimeout(() => { console.log("too late") }, 30000)')
  // Started first: a child takes longer than the limit below to start on a busy machine.
  await awaitOutput(child, output, /waiting/, 'the child to start', longLimitMs)
  const started = Date.now()
  await t.rejects(awaitOutput(child, output, /too late/, 'the late words', 300), /waited in vain for the late words; its output:\nwaiting\n/)
  t.ok(Date.now() - started < promptlyMs, `when its time was up (${Date.now() - started} ms)`)
  assertListenersRemoved(t, child)
})
