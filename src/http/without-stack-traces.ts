import type { Socket } from 'node:net'

// When a connection closes, Node aborts each request still unanswered on it with an error whose
// stack trace it captures, a good part of the work a burst of overflowing connections costs
// (docs/reliability.md). For such a connection, whose requests nobody will read about, the traces
// are left out: the limit is lowered just before Node's own close listener and put back just
// after it.
export function withoutStackTraces (socket: Socket): void {
  let stackTraceLimit = Error.stackTraceLimit
  const restore = (): void => { Error.stackTraceLimit = stackTraceLimit }
  socket.prependOnceListener('close', () => {
    stackTraceLimit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    // Put back even if a listener between throws.
    process.nextTick(restore)
  })
  socket.once('close', restore)
}
