import { writeSync } from 'node:fs'
import type { DestinationStream } from 'pino'

// Where the service's log lines go: standard output, in one synchronous write per turn of the
// event loop instead of one per line. Under load a turn answers a whole batch of creates, so
// their access lines cost one write(2) together. pino's default destination hands every write
// to libuv's thread pool (a thread's wake-up and a round trip each); its synchronous one, when
// flushed, also fsyncs the file. A line waits at most until the end of the turn that logged it,
// after that turn's responses were handed to their sockets; the last turn's lines are written
// when the process exits, however it exits but for SIGKILL.
//
// One for the process, as standard output is: every app built in it (tests build many) shares it.
let stdoutDestination: DestinationStream | undefined

export function stdoutLogDestination (): DestinationStream {
  stdoutDestination ??= createTurnBufferedDestination(1)
  return stdoutDestination
}

export function createTurnBufferedDestination (fd: number): DestinationStream {
  let pending = ''
  let flushScheduled = false
  const flush = (): void => {
    flushScheduled = false
    if (pending === '') return
    writeFully(fd, Buffer.from(pending))
    pending = ''
  }
  process.once('exit', flush)
  return {
    write (line: string): void {
      pending += line
      if (!flushScheduled) {
        flushScheduled = true
        setImmediate(flush)
      }
    },
  }
}

const retryPause = new Int32Array(new SharedArrayBuffer(4))

// A pipe may take part of a write, or none for now (EAGAIN, when its reader lags): the rest is
// written once it can be. A standard output that is gone (EPIPE) loses the lines rather than
// the service.
function writeFully (fd: number, bytes: Buffer): void {
  let rest = bytes
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(fd, rest))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return
      Atomics.wait(retryPause, 0, 0, 10)
    }
  }
}
