import { createServer, type IncomingMessage, request as httpRequest, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import { ContentTooLargeError, InternalError, type ApiError } from '../errors/api-errors.js'
import { requestIdOf } from '../fastify-options.js'
import { commonResponseHeaders, errorBody } from '../http/error-response.js'
import type { LoadedOpenApiDocument } from '../openapi/openapi-document.js'
import type { CheckedOperation, RequestCheck } from './request-check.js'

export interface MockFrontOptions {
  readonly host: string
  readonly port: number
  // Where Prism serves openapi.yaml; only the front talks to it.
  readonly prismUrl: URL
  readonly check: RequestCheck
  // The document the mock is of, served as the service serves it.
  readonly openApi: LoadedOpenApiDocument
}

// The service's default BODY_LIMIT: Prism would read up to 10 MB, and wait for ever on a body
// beyond that as on a body that is not JSON.
const bodyLimit = 16384

// Prism's own headers, which the service never sends: the violations it saw in a request (the
// front has refused every one the service would refuse).
const prismOnlyHeaders = ['sl-violations']

// `npm run mock`: every request reaches this front first. What the service would refuse (a path
// or method not declared, missing, malformed or unknown credentials, a path, query, header or
// body its validator refuses) is answered
// here with the service's own Error and headers, in the service's order; the documents at
// /openapi.yaml and /openapi.json are served as the service serves them; everything else goes to
// Prism, which answers with the spec's examples and statuses. Every answer carries the service's
// common headers (nosniff, the request id).
export async function startMockFront ({ host, port, prismUrl, check, openApi }: MockFrontOptions): Promise<Server> {
  const documents = servedDocuments(openApi)
  const server = createServer((request, response) => {
    const common = commonResponseHeaders(requestIdOf(request.headers))
    const method = request.method ?? 'GET'
    // A target Node parses but URL does not (`//[`) reads no operation's path: Prism answers it.
    const url = URL.canParse(request.url ?? '/', 'http://mock') ? new URL(request.url ?? '/', 'http://mock') : undefined
    const operation = url === undefined ? undefined : check.operationOf(method, url.pathname)
    // No operation: the service's 404 or 405, before the body is read. A target URL cannot parse
    // is answered as the service answers a path it does not declare.
    if (url === undefined || operation === undefined) {
      request.resume()
      answerError(response, common, check.refuseUnrouted(method, request.url ?? '/'))
      return
    }
    // Credentials first, before a byte of the body is read, as the service.
    const credentialsRefusal = operation.refuseCredentials(request.headers)
    if (credentialsRefusal !== undefined) {
      request.resume()
      answerError(response, common, credentialsRefusal)
      return
    }
    // A body its operation does not read is discarded as it arrives, of any size, and the request
    // answered without it, at once, as the service answers without waiting for it.
    if (!operation.readsBody) {
      request.resume()
      answer(operation, url, request, undefined, response, common)
      return
    }
    void readBody(request).then((body) => {
      if (body === undefined) answerError(response, common, new ContentTooLargeError(bodyLimit), { connection: 'close' })
      else answer(operation, url, request, body, response, common)
    }).catch(() => failed(response, common))
  })

  // The refusal the service would answer, else the served document, else Prism's example.
  function answer (operation: CheckedOperation, url: URL, request: IncomingMessage, body: Buffer | undefined, response: ServerResponse, common: Record<string, string>): void {
    const refusal = operation.refuseRequest({ pathname: url.pathname, query: url.searchParams, headers: request.headers, body })
    if (refusal !== undefined) {
      answerError(response, common, refusal)
      return
    }
    const document = operation.operationId === undefined ? undefined : documents.get(operation.operationId)
    if (document !== undefined) {
      response.writeHead(200, { ...common, 'content-type': document.contentType })
      response.end(document.bytes)
      return
    }
    forwardToPrism(prismTarget(prismUrl, operation, url), request, body, response, common)
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => { server.off('error', reject); resolve() })
  })
  return server
}

// The operations whose answer is the spec itself, as src/handlers/operational-endpoints.ts
// serves it: Prism has no serializer for application/yaml, and would make up a JSON object.
function servedDocuments ({ document, yamlText }: LoadedOpenApiDocument): Map<string, { contentType: string, bytes: Buffer }> {
  return new Map([
    ['getOpenApiYaml', { contentType: 'application/yaml; charset=utf-8', bytes: Buffer.from(yamlText) }],
    ['getOpenApiJson', { contentType: 'application/json; charset=utf-8', bytes: Buffer.from(JSON.stringify(document)) }],
  ])
}

// Where Prism is asked: at the operation's example path, with only the query parameters that pick
// Prism's answer (`__code`, `__example`, `__dynamic`, as the Prefer header does). The others are
// validated already, and Prism's answer does not depend on them; its own validation would refuse
// some the service accepts.
function prismTarget (prismUrl: URL, operation: CheckedOperation, url: URL): URL {
  const target = new URL(operation.prismPath(url.pathname), prismUrl)
  for (const [name, value] of url.searchParams) {
    if (name.startsWith('__')) target.searchParams.append(name, value)
  }
  return target
}

// The whole body, or undefined once it is larger than the limit (the rest is not read).
async function readBody (request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size > bodyLimit) return undefined
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

function answerError (response: ServerResponse, common: Record<string, string>, apiError: ApiError, headers: Record<string, string> = {}): void {
  response.writeHead(apiError.statusCode, {
    ...common, ...apiError.headers, ...headers, 'content-type': 'application/json; charset=utf-8',
  })
  response.end(JSON.stringify(errorBody(apiError)))
}

// A body that could not be read (the client went away), or a check that failed.
function failed (response: ServerResponse, common: Record<string, string>): void {
  if (response.headersSent) response.destroy()
  else answerError(response, common, new InternalError())
}

// The request as the service reads it (with its body, or, for an operation that reads none,
// without) to `target`.
function forwardToPrism (target: URL, request: IncomingMessage, body: Buffer | undefined, response: ServerResponse, common: Record<string, string>): void {
  const headers = { ...request.headers, 'content-length': String(body?.length ?? 0) }
  delete headers['transfer-encoding']
  if (body === undefined) {
    delete headers['content-type']
    delete headers['content-encoding']
  }
  const toPrism = httpRequest(target, { method: request.method, headers }, (fromPrism) => {
    const answered: OutgoingHttpHeaders = { ...fromPrism.headers, ...common }
    for (const name of prismOnlyHeaders) delete answered[name]
    response.writeHead(fromPrism.statusCode ?? 502, answered)
    fromPrism.pipe(response)
  })
  // Prism gone mid-answer: the client's connection is cut, as a proxy does; before it, a 500.
  toPrism.on('error', () => failed(response, common))
  toPrism.end(body)
}
