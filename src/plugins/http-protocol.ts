import { isIPv6 } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { MalformedRequestError } from '../errors/api-errors.js'
import { bodyIgnored } from '../http/ignored-body.js'
import { contentTypeRefusal } from '../http/json-content-type.js'

export interface HttpProtocolOptions {
  // Milliseconds a request may take to arrive in full.
  readonly requestTimeout: number
}

// Parts of HTTP/1.1 that Node's server would otherwise answer on its own, with bodies the spec
// does not declare, or before credentials are checked.
async function httpProtocol (app: FastifyInstance, { requestTimeout }: HttpProtocolOptions): Promise<void> {
  // Node would send "100 Continue" before any hook runs, inviting an unauthenticated client to
  // upload its body; it is sent below, once onRequest (authentication, routing) has passed.
  app.server.on('checkContinue', (request, response) => app.server.emit('request', request, response))
  // Node would answer an unknown expectation with a bare 417; RFC 9110 lets a server ignore it.
  app.server.on('checkExpectation', (request, response) => app.server.emit('request', request, response))

  // Node's own check (a bare 400) is turned off in buildApp so that this one answers instead.
  // The per-request hooks take a callback: an async hook costs a promise on every request.
  app.addHook('onRequest', (request, _reply, done) => {
    done(request.raw.httpVersion === '1.1' && request.headers.host === undefined
      ? new MalformedRequestError('the Host header is required')
      : targetProblem(request.raw.url ?? '', request.raw.method) ?? headerProblem(request.raw.rawHeaders))
  })

  // Only a body that will be read is invited: a refused media type or a declared length over
  // the limit is answered (415, 413) without the client sending it.
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (request.headers.expect?.toLowerCase() === '100-continue' && !reply.raw.headersSent && !bodyIgnored(request)) {
      const declaredLength = Number(request.headers['content-length'] ?? 0)
      if (contentTypeRefusal(request.headers) === undefined && declaredLength <= request.routeOptions.bodyLimit) {
        reply.raw.writeContinue()
      }
    }
    done(null, payload)
  })

  // The bound of shutdown: a connection still open REQUEST_TIMEOUT after it began (a body that
  // stalls, an answer its client does not read) is cut.
  app.addHook('preClose', async () => {
    setTimeout(() => app.server.closeAllConnections(), requestTimeout).unref()
  })
}

// A request target is a path (origin-form) or a whole URL (absolute-form), RFC 9112 section 3.2;
// the asterisk-form (`*`) is OPTIONS' alone (which no path matches: a 404). The router
// matches a target from its second character, whatever its first: `*plants/1` would be
// `/plants/1`.
const absoluteForm = /^https?:\/\//i

function targetProblem (target: string, method: string | undefined): MalformedRequestError | undefined {
  if (target.charCodeAt(0) === 47 || absoluteForm.test(target) || (target === '*' && method === 'OPTIONS')) return undefined
  return new MalformedRequestError(`the request target ${JSON.stringify(target.slice(0, 100))} is neither a path nor a URL`)
}

// Fields a request may send once (RFC 9110): Node keeps the first of several and drops the rest
// unseen, so a second Authorization or Content-Type would be ignored rather than refused, and
// RFC 9112 section 3.2 requires a 400 for more than one Host, or one that is not a host. Each has
// a bit, so that a request's scan allocates nothing.
const singleFields = new Map([['host', { name: 'Host', bit: 1 }], ['authorization', { name: 'Authorization', bit: 2 }], ['content-type', { name: 'Content-Type', bit: 4 }]])
const singleFieldLengths = new Set([...singleFields.keys()].map((name) => name.length))
// uri-host [ ":" port ] (RFC 3986): an IP literal in brackets or a reg-name (empty for a target
// with no authority), then digits.
const hostAndPort = /^(\[[^\]]*\]|[^:[\]]*)(?::\d*)?$/
const regName = /^(?:[0-9A-Za-z._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*$/
const ipFuture = /^v[0-9A-Fa-f]+\.[0-9A-Za-z._~!$&'()*+,;=:-]+$/
// An IPv6 address may end in a zone (RFC 6874's %25eth0, or %eth0 as Node's client sends it).
const zone = /%(?:25)?[0-9A-Za-z._~-]+$/

function isHost (value: string): boolean {
  const host = hostAndPort.exec(value)?.[1]
  if (host === undefined) return false
  if (!host.startsWith('[')) return regName.test(host)
  const literal = host.slice(1, -1)
  return ipFuture.test(literal) || isIPv6(literal.replace(zone, ''))
}

// Why the request's header lines make it malformed, or undefined. One pass over the raw lines,
// lower-casing only names as long as a field that must come once.
function headerProblem (rawHeaders: readonly string[]): MalformedRequestError | undefined {
  let seen = 0
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!
    if (!singleFieldLengths.has(name.length)) continue
    const field = singleFields.get(name.toLowerCase())
    if (field === undefined) continue
    if ((seen & field.bit) !== 0) return new MalformedRequestError(`the ${field.name} header must be sent once, not more`)
    seen |= field.bit
    if (field.name === 'Host' && !isHost(rawHeaders[index + 1]!)) {
      return new MalformedRequestError(`the Host header ${JSON.stringify(rawHeaders[index + 1]!.slice(0, 100))} is not a host`)
    }
  }
  return undefined
}

export default fp(httpProtocol, { name: 'http-protocol', fastify: '5.x' })
