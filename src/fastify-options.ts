import { randomUUID } from 'node:crypto'
import type { IncomingHttpHeaders, Server } from 'node:http'
import type { FastifyBaseLogger, FastifyHttpOptions, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from './config/config.js'
import { clientErrorAnswer } from './http/client-error-response.js'
import { ConnectionGuard } from './http/connection-guard.js'
import { sendError } from './http/error-response.js'
import { type LogDestination, stdoutLogDestination } from './http/log-destination.js'
import { prettyLogDestination } from './http/pretty-log-line.js'
import { AccessLog, serializeRequest } from './http/request-log.js'
import type { Observability } from './observability/observability.js'
import { buildRequestValidator, exactValidationOptions } from './openapi/request-validator.js'

const clientRequestId = /^[A-Za-z0-9._:-]{1,128}$/

// A request's id: the caller's X-Request-Id when it is sane, else a new one. The mock
// (src/mock/) gives its answers ids the same way.
export function requestIdOf (headers: IncomingHttpHeaders): string {
  const sent = headers['x-request-id']
  return typeof sent === 'string' && clientRequestId.test(sent) ? sent : randomUUID()
}

// After SIGTERM, how long a keep-alive connection stays open while idle: a request its client sent
// just before the signal still arrives and is answered.
const shutdownIdleGraceMs = 1000
// Pipelined requests read and waiting for those before them, over every connection, past which no
// further connection may begin to wait: at about 2 KiB a small request (Node's request and
// response objects; more with large headers) some 8 MiB, passed by one read at most (some 1,400
// small requests). Only a client that sends more than MAX_UNANSWERED_REQUESTS at once makes its
// requests wait, fifty creates in one write 34 of them, so about 120 such clients are served at
// once; one that never reads is served until its socket's buffers fill and holds a read's worth
// (docs/reliability.md), so that a few of those fill the bound and the next is closed.
const maxWaitingRequests = 4096

// Fastify's options: the server under it, its logger and access line, its limits, and the
// validator and error answers the spec calls for. `log` is the app's logger, once it exists.
export type FastifySettings = Pick<Config,
  'LOG_LEVEL' | 'LOG_FORMAT' | 'BODY_LIMIT' | 'REQUEST_TIMEOUT' | 'MAX_CONNECTIONS' | 'MAX_UNANSWERED_REQUESTS'>

export function fastifyOptions (
  config: FastifySettings, observability: Observability, logColors: boolean, log: () => FastifyBaseLogger, connectionGuard: ConnectionGuard
): FastifyHttpOptions<Server> {
  return {
    logger: {
      level: config.LOG_LEVEL,
      // Request lines are written by serializeRequest, which leaves out headers and query values
      // (test/access-log.test.ts holds it to that), so there is nothing under `req` to redact, and
      // redacting there would copy every access line. Headers logged by hand are still redacted.
      serializers: { req: serializeRequest },
      redact: { paths: ['headers.authorization', 'headers.cookie'], censor: '[redacted]' },
      stream: logDestination(config, logColors),
    },
    logController: new AccessLog(observability.requestCompleted),
    bodyLimit: config.BODY_LIMIT,
    // Node's server settings. The connection guard creates the server (serverFactory below), so
    // they are all given here, where Node reads them, not as Fastify's own options, which Fastify
    // applies only to a server it creates.
    http: {
      // A request must arrive in full within this time, or it gets a 408 and its connection is
      // closed: a client that sends its body slowly cannot hold a connection for ever.
      requestTimeout: config.REQUEST_TIMEOUT,
      // With headersTimeout (60 s by default) above requestTimeout, a request whose body stalled
      // was not timed out on Node 20; and Node looks for expired requests only every
      // connectionsCheckingInterval (30 s by default).
      headersTimeout: Math.min(60_000, config.REQUEST_TIMEOUT),
      connectionsCheckingInterval: checkingIntervalMs(config),
      // Fastify's default: longer than the 60 s a load balancer commonly keeps an idle
      // connection, so that the balancer, not the service, closes it (Node's 5 s would close
      // connections a balancer is about to reuse).
      keepAliveTimeout: 72_000,
      // Node's own Host check answers a bare 400; http-protocol.ts answers an Error body.
      requireHostHeader: false,
    },
    // A path parameter of any length reaches the spec's validation, which says what is wrong with
    // it (an id of 101 characters may still be an int64: `1.000…0`); Fastify's default of 100 would
    // refuse a longer one before any hook. The request line is bounded by Node's 16 KiB of headers.
    routerOptions: { maxParamLength: 16 * 1024 },
    // HEAD is not declared in openapi.yaml, so it gets the same 405 as any undeclared method.
    exposeHeadRoutes: false,
    // Fastify's own 503 while closing has a body the spec does not declare; in-flight and
    // keep-alive requests are finished instead, and the store closes after them.
    return503OnClosing: false,
    // The connection guard bounds each connection and closes idle ones gently on shutdown,
    // where Fastify and Node would reset them at once (docs/reliability.md).
    serverFactory: connectionGuard.serverFactory,
    forceCloseConnections: false,
    genReqId: (request) => requestIdOf(request.headers),
    ajv: exactValidationOptions,
    schemaController: { compilersFactory: { buildValidator: buildRequestValidator } },
    clientErrorHandler: observability.countedClientErrors(clientErrorAnswer(connectionGuard.pendingAnswers)),
    frameworkErrors: (error, request, reply) => {
      void sendError(error, request as FastifyRequest, reply as FastifyReply)
    },
  }
}

// The server's guard of its connections (src/http/connection-guard.ts), which also counts the
// requests the webhooks' deliveries give way to.
export function createConnectionGuard (config: FastifySettings, log: () => FastifyBaseLogger): ConnectionGuard {
  return new ConnectionGuard({
    maxConnections: config.MAX_CONNECTIONS,
    maxUnansweredRequests: config.MAX_UNANSWERED_REQUESTS,
    maxWaitingRequests,
    // A connection on which nothing moves is, to the service, one whose request takes too long:
    // it gets twice that time and Node's check for expired requests, so that a request whose body
    // stalls gets its 408 first.
    inactiveConnectionMs: 2 * config.REQUEST_TIMEOUT + checkingIntervalMs(config),
    shutdownIdleGraceMs,
  }, log)
}

function checkingIntervalMs (config: FastifySettings): number {
  return Math.min(1000, config.REQUEST_TIMEOUT)
}

// LOG_FORMAT=auto is settled by src/server.ts, which knows whether standard output is a terminal;
// an app built without it (the tests) logs JSON.
function logDestination (config: FastifySettings, colors: boolean): LogDestination {
  return config.LOG_FORMAT === 'pretty' ? prettyLogDestination(stdoutLogDestination(), { colors }) : stdoutLogDestination()
}
