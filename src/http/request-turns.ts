import type { IncomingMessage } from 'node:http'
import { unreachable } from '../errors/unreachable.js'

// Pipelined requests take effect in the order they were sent (RFC 9112 §9.3.2), as if each had
// waited for the answer before it. The app works on up to 16 of a connection's requests at once
// (src/http/connection-guard.ts), and a request whose body is still being read, or whose
// credentials are being checked, would otherwise let the next one reach the store first: a delete
// ahead of the create sent before it, a read that misses the write sent before it.
//
// Each request takes a turn as it is handed to the app, in the order read (at most 16 of a
// connection's at a time wait on each other). What a request's handler may wait for depends on what
// it does (RequestKind): a write waits for the writes before it to be queued in the store (the
// store's one queue keeps their order, so pipelined creates still share a commit) and for the
// reads before it to be done; a read waits for the writes before it to be done; anything else
// waits for every request before it to be done. A request answered without its handler (a 400,
// a 401) is done when it is answered.
export type RequestKind =
  | 'write' // its handler hands its write to the store's queue before its first await (createPlant, deletePlant)
  | 'read' // it changes nothing
  | 'other' // it changes something, in its own time (the webhook endpoints' operations)

export class RequestTurn {
  // Whether every request before this one lets a write or a read go on.
  #writesMayGo: boolean
  #readsMayGo: boolean
  // Whether this request itself lets the next write or read go on.
  #letsWritesGo = false
  #letsReadsGo = false
  #next: RequestTurn | undefined
  #waiters: Array<{ readonly kind: RequestKind, readonly resume: () => void }> | undefined

  constructor (previous: RequestTurn | undefined) {
    this.#writesMayGo = previous === undefined || previous.#letsWritesThrough()
    this.#readsMayGo = previous === undefined || previous.#letsReadsThrough()
    if (previous !== undefined && !(this.#writesMayGo && this.#readsMayGo)) previous.#next = this
  }

  // Undefined when a handler of this kind may go on now, else what resolves once it may.
  waitFor (kind: RequestKind): Promise<void> | undefined {
    if (this.#mayGo(kind)) return undefined
    return new Promise((resolve) => { (this.#waiters ??= []).push({ kind, resume: resolve }) })
  }

  // The handler has run up to its first await. A write's handler has then handed its write to the
  // store's queue, or never will (refused, or failed first): the writes behind it may go. A read
  // lets the reads behind it read beside it.
  began (kind: RequestKind): void {
    switch (kind) {
      case 'write': return this.#update(true, this.#letsReadsGo)
      case 'read': return this.#update(this.#letsWritesGo, true)
      case 'other': return
      default: return unreachable(kind)
    }
  }

  // Answered: nothing of this request is left to wait for.
  done (): void {
    this.#update(true, true)
  }

  #mayGo (kind: RequestKind): boolean {
    switch (kind) {
      case 'write': return this.#writesMayGo
      case 'read': return this.#readsMayGo
      case 'other': return this.#writesMayGo && this.#readsMayGo
      default: return unreachable(kind)
    }
  }

  #letsWritesThrough (): boolean {
    return this.#writesMayGo && this.#letsWritesGo
  }

  #letsReadsThrough (): boolean {
    return this.#readsMayGo && this.#letsReadsGo
  }

  // Tells the requests behind this one, in turn, as far as what they may do changes: a loop, not
  // a recursion, and it stops at the first that it leaves as it was.
  #update (letsWritesGo: boolean, letsReadsGo: boolean): void {
    this.#letsWritesGo = letsWritesGo
    this.#letsReadsGo = letsReadsGo
    RequestTurn.#tellBehind(this)
  }

  static #tellBehind (changed: RequestTurn): void {
    let previous = changed
    let turn = changed.#next
    while (turn !== undefined) {
      const writesMayGo = previous.#letsWritesThrough()
      const readsMayGo = previous.#letsReadsThrough()
      // Once a request lets everything after it go on, the next needs to hear no more of it.
      if (writesMayGo && readsMayGo) previous.#next = undefined
      if (writesMayGo === turn.#writesMayGo && readsMayGo === turn.#readsMayGo) return
      turn.#writesMayGo = writesMayGo
      turn.#readsMayGo = readsMayGo
      turn.#resumeWaiters()
      previous = turn
      turn = turn.#next
    }
  }

  #resumeWaiters (): void {
    if (this.#waiters === undefined) return
    const waiters = this.#waiters
    this.#waiters = waiters.filter(({ kind }) => !this.#mayGo(kind))
    for (const waiter of waiters) if (this.#mayGo(waiter.kind)) waiter.resume()
    if (this.#waiters.length === 0) this.#waiters = undefined
  }
}

const turnOf = new WeakMap<IncomingMessage, RequestTurn>()

// Called for each request of a connection as the connection guard hands it to the app (in the
// order read), with the turn of the one handed on before it.
export function takeTurn (request: IncomingMessage, previous: RequestTurn | undefined): RequestTurn {
  const turn = new RequestTurn(previous)
  turnOf.set(request, turn)
  return turn
}

// The request's turn; undefined for a request that took none (one injected by a test).
export function requestTurn (request: IncomingMessage): RequestTurn | undefined {
  return turnOf.get(request)
}
