import { writeSync } from 'node:fs'

// Where the service's log lines go: standard output, in one synchronous write per turn of the
// event loop instead of one per line. Under load a turn answers a whole batch of creates, so
// their access lines cost one write(2) together. pino's default destination hands every write
// to libuv's thread pool (a thread's wake-up and a round trip each); its synchronous one, when
// flushed, also fsyncs the file. A line waits at most until the end of the turn that logged it,
// after that turn's responses were handed to their sockets, and lines still waiting are
// written when the process exits normally or after an uncaught error.
//
// A standard output that does not drain (a pipe whose reader stalls) is given retryBudgetMs;
// what it did not take waits, and is tried again (once, without waiting) every retryAfterMs or
// at the next turn that logs. Past maxWaitingBytes the waiting lines are dropped and counted in
// a line of their own, so the service neither stalls nor grows.
// A standard output that is gone (EPIPE) loses the lines rather than the service.
const retryBudgetMs = 50
const retryAfterMs = 100
const maxWaitingBytes = 16 * 1024 * 1024

export interface LogDestination {
  write (line: string): void
  // Writes the waiting lines now: before text written to standard output by other means.
  flush (): void
}

// Writes what it can of bytes to fd, and says how many it wrote.
export type WriteBytes = (fd: number, bytes: Uint8Array) => number

// One for the process, as standard output is: every app built in it (tests build many) shares it.
let stdoutDestination: LogDestination | undefined

export function stdoutLogDestination (): LogDestination {
  stdoutDestination ??= createTurnBufferedDestination(1)
  return stdoutDestination
}

export function createTurnBufferedDestination (fd: number, writeBytes: WriteBytes = writeSync): LogDestination {
  // Lines logged since the last flush, and bytes a lagging standard output has not taken yet.
  let waiting = ''
  let unwritten: Buffer = Buffer.alloc(0)
  let droppedLines = 0
  let flushScheduled = false
  let exiting = false

  const flush = (): void => {
    flushScheduled = false
    if (droppedLines > 0) {
      waiting = `{"level":40,"time":${Date.now()},"msg":"${droppedLines} log lines were dropped: standard output did not drain"}\n${waiting}`
      droppedLines = 0
    }
    if (waiting === '' && unwritten.length === 0) return
    // Already behind: one try, without waiting, until the output takes bytes again.
    const budgetMs = exiting ? 10 * retryBudgetMs : unwritten.length > 0 ? 0 : retryBudgetMs
    const bytes = unwritten.length === 0 ? Buffer.from(waiting) : Buffer.concat([unwritten, Buffer.from(waiting)])
    waiting = ''
    unwritten = writeWithin(fd, bytes, writeBytes, budgetMs)
    if (unwritten.length > 0 && !exiting) scheduleFlush(retryAfterMs)
  }
  const scheduleFlush = (afterMs?: number): void => {
    if (flushScheduled) return
    flushScheduled = true
    if (afterMs === undefined) setImmediate(flush)
    else setTimeout(flush, afterMs).unref()
  }
  process.once('exit', () => {
    exiting = true
    flush()
  })

  return {
    write (line: string): void {
      if (unwritten.length + waiting.length + line.length > maxWaitingBytes) {
        droppedLines += countLines(unwritten.toString()) + countLines(waiting)
        unwritten = Buffer.alloc(0)
        waiting = ''
      }
      waiting += line
      // After the exit flush no turn follows: write at once.
      if (exiting) flush()
      else scheduleFlush()
    },
    flush,
  }
}

function countLines (text: string): number {
  let lines = 0
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lines++
  return lines
}

const retryPause = new Int32Array(new SharedArrayBuffer(4))

// A pipe may take part of a write, or none for now (EAGAIN): the rest is tried again for up to
// budgetMs, and what is left after that is returned. Any other failure (EPIPE: nobody reads)
// drops the bytes.
function writeWithin (fd: number, bytes: Buffer, writeBytes: WriteBytes, budgetMs: number): Buffer {
  const deadline = Date.now() + budgetMs
  let rest = bytes
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeBytes(fd, rest))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return Buffer.alloc(0)
      if (Date.now() >= deadline) return rest
      Atomics.wait(retryPause, 0, 0, 5)
    }
  }
  return rest
}
