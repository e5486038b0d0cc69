// Reads an strace log (strace -f -y: every line starts with the thread id, each file descriptor
// is followed by the file it names in angle brackets) and checks that no 200 response was written
// to a socket before the fsync of the WAL write it follows.

interface TracedCall {
  readonly name: string
  readonly file: string
  // Lines of the log where the call began and where it returned (the same line unless strace
  // split it into "<unfinished ...>" and "<... resumed>" because another thread ran meanwhile).
  readonly began: number
  readonly returned: number
  readonly arguments: string
  readonly result: string
}

export interface FlushOrderReport {
  readonly responses: number
  readonly walWrites: number
  readonly walSyncs: number
  // The most 200 responses written after one WAL sync: more than one shows commits grouped.
  readonly mostResponsesPerSync: number
  readonly violations: readonly string[]
}

const completeCall = /^(\d+) +\S+ (\w+)\((\d+)<([^>]*)>(.*)\) += (.+)$/
const unfinishedCall = /^(\d+) +\S+ (\w+)\((\d+)<([^>]*)>(.*) <unfinished \.\.\.>$/
const resumedCall = /^(\d+) +\S+ <\.\.\. (\w+) resumed>.*\) += (.+)$/

const writeCalls = new Set(['write', 'writev', 'pwrite64', 'pwritev', 'pwritev2', 'sendto', 'sendmsg'])
const syncCalls = new Set(['fsync', 'fdatasync'])
const isWal = (call: TracedCall): boolean => call.file.endsWith('-wal')
const isSocket = (call: TracedCall): boolean => /^(socket|TCP|TCPv6):/.test(call.file)
const succeeded = (call: TracedCall): boolean => /^\d+/.test(call.result)

export function parseTrace (trace: string): TracedCall[] {
  const calls: TracedCall[] = []
  const unfinished = new Map<string, Omit<TracedCall, 'returned' | 'result'>>()
  trace.split('\n').forEach((line, index) => {
    const complete = completeCall.exec(line)
    if (complete !== null) {
      const [, , name, , file, args, result] = complete as unknown as string[]
      calls.push({ name: name!, file: file!, began: index, returned: index, arguments: args!, result: result! })
      return
    }
    const started = unfinishedCall.exec(line)
    if (started !== null) {
      const [, thread, name, , file, args] = started as unknown as string[]
      unfinished.set(thread!, { name: name!, file: file!, began: index, arguments: args! })
      return
    }
    const resumed = resumedCall.exec(line)
    const call = resumed === null ? undefined : unfinished.get(resumed[1]!)
    if (resumed !== null && call !== undefined && call.name === resumed[2]) {
      unfinished.delete(resumed[1]!)
      calls.push({ ...call, returned: index, result: resumed[3]! })
    }
  })
  return calls.sort((a, b) => a.began - b.began)
}

// For every 200 written to a socket: the last WAL write begun before it must have returned, and
// a WAL sync must have begun after that and returned before the response began. A response with
// no WAL write before it at all is a violation too: every create checked here is a new plant.
export function checkFlushOrder (trace: string): FlushOrderReport {
  const calls = parseTrace(trace)
  const walWrites = calls.filter((call) => writeCalls.has(call.name) && isWal(call) && succeeded(call))
  const walSyncs = calls.filter((call) => syncCalls.has(call.name) && isWal(call) && call.result === '0')
  const responses = calls.filter((call) =>
    writeCalls.has(call.name) && isSocket(call) && succeeded(call) && /"HTTP\/1\.1 200 /.test(call.arguments))

  const violations: string[] = []
  const responsesPerSync = new Map<TracedCall, number>()
  for (const response of responses) {
    const lastWrite = walWrites.findLast((write) => write.began < response.began)
    const sync = lastWrite === undefined
      ? undefined
      : walSyncs.find((sync) => sync.began > lastWrite.returned && sync.returned < response.began)
    if (sync === undefined) {
      const after = lastWrite === undefined ? 'with no WAL write before it' : `after the WAL write of line ${lastWrite.began + 1} with no sync between`
      violations.push(`line ${response.began + 1}: a 200 written ${after}`)
    } else {
      responsesPerSync.set(sync, (responsesPerSync.get(sync) ?? 0) + 1)
    }
  }
  return {
    responses: responses.length,
    walWrites: walWrites.length,
    walSyncs: walSyncs.length,
    mostResponsesPerSync: Math.max(0, ...responsesPerSync.values()),
    violations,
  }
}
