import type { IncomingMessage, ServerResponse } from 'node:http'

type Exchange = readonly [IncomingMessage, ServerResponse]

// The longest the backlog may keep the event loop before other connections are read.
const backlogSliceMs = 5
// Requests handled as they are read, in one turn of the event loop; the rest of a burst waits in
// the backlog. The benchmark's 32 connections stay below.
const immediateRequestsPerTurn = 64

// Hands requests to the app so that no burst keeps the event loop: a request that arrives alone
// on its connection is handled at once (up to immediateRequestsPerTurn in a turn); one pipelined
// behind another, or past that many, waits in a backlog worked through backlogSliceMs a turn of
// the event loop, or one request a turn while new connections arrive.
export class FairRequestQueue {
  readonly #handler: (request: IncomingMessage, response: ServerResponse) => void
  readonly #backlog: Exchange[] = []
  #backlogScheduled = false
  #immediateThisTurn = 0
  readonly #startTurn = (): void => { this.#immediateThisTurn = 0 }
  #connectionsArrived = 0

  constructor (handler: (request: IncomingMessage, response: ServerResponse) => void) {
    this.#handler = handler
  }

  // Node accepts one new connection a turn of the event loop while the loop is busy (measured:
  // 150 connections took 1.2 s to accept with 8 ms of work a turn, 0.2 s with 1 ms). While
  // connections arrive, the backlog takes one request a turn, so that the turns stay short: 170
  // clients pipelining requests they never read kept a new client waiting 0.5–1.2 s to be
  // accepted with backlog slices of 5 ms, and about 0.2 s like this.
  connectionArrived (): void {
    this.#connectionsArrived += 1
  }

  handle (request: IncomingMessage, response: ServerResponse, pipelined: boolean): void {
    if (!pipelined && this.#immediateThisTurn < immediateRequestsPerTurn) {
      if (this.#immediateThisTurn++ === 0) setImmediate(this.#startTurn)
      this.#handler(request, response)
    } else {
      this.#backlog.push([request, response])
      this.#scheduleBacklog()
    }
  }

  #scheduleBacklog (): void {
    if (this.#backlogScheduled) return
    this.#backlogScheduled = true
    setImmediate(() => {
      this.#backlogScheduled = false
      const oneRequest = this.#connectionsArrived > 0
      this.#connectionsArrived = 0
      const sliceEnd = performance.now() + backlogSliceMs
      let next: Exchange | undefined
      while ((next = this.#backlog.shift()) !== undefined) {
        const [request, response] = next
        // A request whose connection closed while it waited is dropped, and takes no turn.
        if (request.socket.destroyed) continue
        this.#handler(request, response)
        if (oneRequest || performance.now() >= sliceEnd) break
      }
      if (this.#backlog.length > 0) this.#scheduleBacklog()
    })
  }
}
