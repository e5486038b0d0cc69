import { Readable } from 'node:stream'
import { text } from 'node:stream/consumers'
import t from 'tap'
// @ts-expect-error: a script of plain JavaScript, loaded by tap itself, with no type declarations.
import ConciseTestReporter from '../scripts/concise-test-reporter.mjs'

const rawTap = `TAP version 14
# Subtest: test/passing.test.ts
    ok 1 - fine
    1..1
ok 1 - test/passing.test.ts # time=1234.5ms

# Subtest: test/failing.test.ts
    # Subtest: a case
        ok 1 - fine
        not ok 2 - should be equal
          ---
          found: 1
          wanted: 2

          more: after a blank line
          ...
        # output of the service:
        # a line it logged
        1..2
    not ok 1 - a case # time=3.2ms
    1..1
not ok 2 - test/failing.test.ts # time=45ms
  ---
  exitCode: 1
  ...

1..2
# { total: 3, pass: 2, fail: 1 }
# time=1300ms
`

t.test('npm test reports a line per file, each failed assertion with its account, and the counts', async (t) => {
  const reporter = new ConciseTestReporter() as NodeJS.ReadWriteStream
  const output = text(reporter)
  Readable.from([rawTap.slice(0, 100), rawTap.slice(100)]).pipe(reporter)
  t.equal(await output, `pass  test/passing.test.ts (1.2 s)
FAIL  test/failing.test.ts (45 ms)
      not ok 2 - should be equal
        ---
        found: 1
        wanted: 2

        more: after a blank line
        ...
      # output of the service:
      # a line it logged
      not ok 1 - a case # time=3.2ms
        ---
        exitCode: 1
        ...
# { total: 3, pass: 2, fail: 1 }
# time=1300ms
`)
})
