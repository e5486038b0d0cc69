import { join } from 'node:path'
import t from 'tap'
import { checkFlushOrder } from './support/flush-order.js'
import { type Plant, sendEach } from './support/plant-requests.js'
import { startTracedServer, straceSkipReason } from './support/traced-server.js'
import { testFolder } from '../support/test-folder.js'

// A 200 promises that the create is on disk. On SQLite that means the commit's WAL frames were
// written and the WAL fsynced before the response left. Where the crash test can only see what
// survives a process kill (which loses nothing the kernel already holds), the system calls show
// the order itself: the fsync that a power cut would need must come before every 200.

const token = 'reliability-token-0123456789'
const creates = 300
const concurrentClients = 32

t.test('the check finds a 200 written before the flush of its commit', async (t) => {
  const trace = (lines: string[]): string =>
    lines.map((line, index) => `100 12:00:00.${String(index).padStart(6, '0')} ${line}`).join('\n')
  const walWrite = 'pwrite64(19</data/plants.db-wal>, "\\0\\0\\0\\4"..., 4096, 32) = 4096'
  const walSync = 'fsync(19</data/plants.db-wal>) = 0'
  const response = 'writev(23<socket:[4711]>, [{iov_base="HTTP/1.1 200 OK\\r\\ncontent-type: applicati"..., iov_len=268}], 1) = 268'

  const inOrder = checkFlushOrder(trace([walWrite, walSync, response, response]))
  t.same(inOrder, { responses: 2, walWrites: 1, walSyncs: 1, mostResponsesPerSync: 2, violations: [] }, 'write, sync, 200s: in order')
  t.same(checkFlushOrder(trace([walWrite, response, walSync])).violations,
    ['line 2: a 200 written after the WAL write of line 1 with no sync between'], 'a 200 before the sync')
  t.same(checkFlushOrder(trace([walWrite, walSync, walWrite, response])).violations,
    ['line 4: a 200 written after the WAL write of line 3 with no sync between'], 'a 200 after a later, unsynced write')
  t.same(checkFlushOrder(trace([response])).violations, ['line 1: a 200 written with no WAL write before it'], 'a 200 with no write')
  const splitSync = ['100 12:00:00.000001 fsync(19</data/plants.db-wal> <unfinished ...>', `101 12:00:00.000002 ${response}`,
    '100 12:00:00.000003 <... fsync resumed>) = 0']
  t.same(checkFlushOrder([trace([walWrite]), ...splitSync].join('\n')).violations,
    ['line 3: a 200 written after the WAL write of line 1 with no sync between'], 'a 200 while the sync is still running')
})

t.test('SQLite: no 200 is written to its socket before the WAL holding its create is fsynced', {
  skip: straceSkipReason,
}, async (t) => {
  const folder = testFolder(t)
  const traceFile = join(folder, 'service.strace')
  const server = await startTracedServer(t, { DATABASE_URL: `sqlite:${join(folder, 'plants.db')}`, API_TOKENS: token }, traceFile)
  const plants: Plant[] = Array.from({ length: creates }, (_, index) => ({ id: BigInt(index + 1), name: `Plant ${index + 1}` }))
  const answers = await sendEach(server.baseUrl, token, plants, concurrentClients)
  const received200 = answers.filter((answer) => 'status' in answer && answer.status === 200).length
  t.equal(received200, creates, `the clients received a 200 for each of the ${creates} creates`)

  const report = checkFlushOrder(await server.stop())
  t.equal(report.responses, received200, 'the trace holds every 200 the clients received')
  t.ok(report.walSyncs > 0, `the WAL was synced (${report.walSyncs} times, after ${report.walWrites} writes)`)
  t.same(report.violations.slice(0, 10), [], `every 200 was written after the WAL sync following the last WAL write before it (${report.violations.length} not)`)
  t.comment(`flush ordering (SQLite): ${report.responses} responses of 200, ${report.walWrites} WAL writes, ` +
    `${report.walSyncs} WAL syncs, at most ${report.mostResponsesPerSync} responses after one sync`)
})
