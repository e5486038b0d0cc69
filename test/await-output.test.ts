import { spawn } from 'node:child_process'
import t from 'tap'
import { awaitOutput } from './support/await-output.js'
import { literalPattern } from './support/literal-pattern.js'

// The helper every test of a process waits with: it must see output written late, written to
// either stream, or written just before the process exits, and give up on a process that exits
// or stays silent.

function childWriting (script: string): { child: ReturnType<typeof spawn>, output: () => string } {
  const child = spawn(process.execPath, ['-e', script])
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  return { child, output: () => output }
}

t.test('resolves with the match of output written later, on either stream', async (t) => {
  const { child, output } = childWriting('setTimeout(() => { process.stderr.write("nothing yet\\n"); setTimeout(() => { console.log("ready at port 4242") }, 50) }, 50); setTimeout(() => {}, 5000)')
  t.teardown(() => { child.kill() })
  const match = await awaitOutput(child, output, /ready at port (\d+)/, 'the child to be ready', 10_000)
  t.equal(match[1], '4242')
})

t.test('sees the last words of a process that exits at once', async (t) => {
  const { child, output } = childWriting('console.log("done: " + "x".repeat(100000))')
  const match = await awaitOutput(child, output, /done: x{100000}/, 'the last words', 10_000)
  t.equal(match[0].length, 100006)
})

t.test('rejects with the output so far once the process exits without the match', async (t) => {
  const { child, output } = childWriting('console.log("something else"); process.exit(3)')
  await t.rejects(awaitOutput(child, output, /never said/, 'the words', 10_000), /waited in vain for the words; its output:\nsomething else\n/)
})

t.test('rejects once the time is up, and stops listening', async (t) => {
  const { child, output } = childWriting('console.log("waiting"); setTimeout(() => { console.log("too late") }, 2000)')
  t.teardown(() => { child.kill() })
  const started = Date.now()
  await t.rejects(awaitOutput(child, output, /too late/, 'the late words', 200), /waited in vain for the late words/)
  t.ok(Date.now() - started < 1500, 'well before the words came')
  t.equal(child.stdout?.listenerCount('data'), 1, 'only the test\'s own listener is left')
})

t.test('a literal pattern takes dots as dots', async (t) => {
  t.ok(literalPattern('listening on http://127.0.0.1:80').test('listening on http://127.0.0.1:80'))
  t.notOk(literalPattern('127.0.0.1').test('127a0b0c1'))
  t.ok(literalPattern('a (b) [c] $d^ *+?').test('x a (b) [c] $d^ *+? y'))
})
