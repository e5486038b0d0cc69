// What the connection guard (src/http/connection-guard.ts) bounds.
export interface ConnectionLimits {
  // The most client connections open at once; Node refuses more.
  readonly maxConnections: number
  // The most requests of one connection handed to the app at once. Past it, the service reads
  // nothing more from the connection until answers have been written.
  readonly maxUnansweredRequests: number
  // The most requests read and waiting for those before them to be answered, over every
  // connection, past which no further connection may begin to wait: each holds at most one
  // read's (64 KiB of) requests, so the total may pass this by one read.
  readonly maxWaitingRequests: number
  // How long a connection with requests waiting may go without its client reading an answer
  // before it is closed.
  readonly stalledConnectionMs: number
  // Once shutdown begins, how long a connection may stay idle before it is closed: time for a
  // request a client has already sent on it to arrive and be answered.
  readonly shutdownIdleGraceMs: number
}
