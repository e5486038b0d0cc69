import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { JSONWebKeySet } from 'jose'
import type { Test } from 'tap'

// An identity provider's JWKS endpoint on 127.0.0.1: the test changes what it answers (a
// rotation, a 500, no answer at all) and counts the requests it gets.
export interface JwksServer {
  readonly url: string
  readonly fetches: number
  publish (keySet: JSONWebKeySet): void
  answerWith (respond: (request: IncomingMessage, response: ServerResponse) => void): void
  close (): Promise<void>
}

// On `port`, or any free one; closed when the test ends.
export async function startJwksServer (t: Test, keySet: JSONWebKeySet, port = 0): Promise<JwksServer> {
  let fetches = 0
  let respond = answerJson(keySet)
  const server = createServer((request, response) => {
    fetches += 1
    respond(request, response)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP port was assigned')
  let closed: Promise<void> | undefined
  const close = () => {
    // A request left hanging would keep the server open.
    closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
    return closed
  }
  t.teardown(close)
  return {
    url: `http://127.0.0.1:${address.port}/.well-known/jwks.json`,
    get fetches () { return fetches },
    publish (keySet) { respond = answerJson(keySet) },
    answerWith (responder) { respond = responder },
    close,
  }
}

function answerJson (keySet: JSONWebKeySet) {
  const body = JSON.stringify(keySet)
  return (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(body)
  }
}
