import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'

// Node's HTTP parser calls this for each request whose headers it has read; its return value
// goes back to the parser, where -1 stops parsing with an error (HPE_CB_HEADERS_COMPLETE).
type OnIncoming = (request: IncomingMessage, keepAlive: boolean) => number
interface HttpParser { onIncoming: OnIncoming | null }

// The parse error of a connection whose parser was cut: the service's clientError handler
// closes it without an answer.
export const parserCutCode = 'HPE_CB_HEADERS_COMPLETE'

// Node parses every request a read brings (up to 64 KiB: over a thousand small requests) before
// anything else runs, and offers no public way to stop in the middle of a read (socket.pause()
// stops the next one). This stops a connection's parser at the first request for which
// `cutBefore` says so, before Node builds its response or emits it (the request object, with
// its headers, exists): cut after its read was parsed, the connection would cost what a
// thousand requests do (docs/reliability.md measures closing it from the request listener
// instead). test/pipelining.test.ts fails if a Node release takes this away.
export function cutParserWhen (socket: Socket, cutBefore: () => boolean): void {
  const parser = (socket as Socket & { parser?: HttpParser | null }).parser
  const nodeOnIncoming = parser?.onIncoming
  if (parser === undefined || parser === null || typeof nodeOnIncoming !== 'function') {
    throw new Error('Node\'s HTTP server no longer gives each connection a parser with onIncoming: the pipelining limit cannot work')
  }
  parser.onIncoming = (request, keepAlive) => cutBefore() ? -1 : nodeOnIncoming(request, keepAlive)
}
