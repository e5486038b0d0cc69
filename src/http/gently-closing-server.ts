import { type IncomingMessage, Server, type ServerOptions, type ServerResponse } from 'node:http'

// Node's server, closing gently. Node's close() calls closeIdleConnections(), which resets every
// idle keep-alive connection at once, so a request a client sent a moment before, still in
// flight, would be lost; here the guard closes them once they have been idle for a while.
export class GentlyClosingServer extends Server {
  constructor (options: ServerOptions, listener: (request: IncomingMessage, response: ServerResponse) => void, private readonly beginShutdown: () => void) {
    super(options, listener)
  }

  override closeIdleConnections (): void {
    this.beginShutdown()
  }
}
