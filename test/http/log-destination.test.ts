import { spawnSync } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import { createTurnBufferedDestination } from '../../src/http/log-destination.js'

t.test('the lines of one turn of the event loop are written together at its end', async (t) => {
  const file = join(t.testdir(), 'log')
  const fd = openSync(file, 'w')
  t.teardown(() => closeSync(fd))
  const destination = createTurnBufferedDestination(fd)
  destination.write('{"n":1}\n')
  destination.write('{"n":2}\n')
  t.equal(readFileSync(file, 'utf8'), '', 'nothing written during the turn')
  await nextTurn()
  t.equal(readFileSync(file, 'utf8'), '{"n":1}\n{"n":2}\n', 'both lines, in order, once the turn ended')
  destination.write('{"n":3}\n')
  await nextTurn()
  t.equal(readFileSync(file, 'utf8'), '{"n":1}\n{"n":2}\n{"n":3}\n', 'a later turn appends its own')
})

t.test('lines logged just before the process exits are written', async (t) => {
  const file = join(t.testdir(), 'log')
  // The built module, as the service runs it (npm test builds first).
  const module = new URL('../../dist/src/http/log-destination.js', import.meta.url).href
  const script = `import { openSync } from 'node:fs'
    const { createTurnBufferedDestination } = await import(${JSON.stringify(module)})
    const destination = createTurnBufferedDestination(openSync(${JSON.stringify(file)}, 'w'))
    destination.write('last words\\n')
    process.exit(3)`
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' })
  t.equal(child.status, 3, 'the process exited as it was told')
  t.equal(readFileSync(file, 'utf8'), 'last words\n')
})
