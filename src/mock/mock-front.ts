import { createServer, type IncomingMessage, request as httpRequest, type Server, type ServerResponse } from 'node:http'
import { ContentTooLargeError, InternalError, type ApiError } from '../errors/api-errors.js'
import { errorBody } from '../http/error-response.js'
import type { RequestBodyCheck } from './request-body-check.js'

export interface MockFrontOptions {
  readonly host: string
  readonly port: number
  // Where Prism serves openapi.yaml; only the front talks to it.
  readonly prismUrl: URL
  readonly checkBody: RequestBodyCheck
}

// The service's default BODY_LIMIT: Prism would read up to 10 MB, and wait for ever on a body
// beyond that as on a body that is not JSON.
const bodyLimit = 16384

// `npm run mock`: every request reaches this front first. A body the service would refuse is
// answered here, with the service's own Error; everything else goes to Prism, which answers with
// the spec's examples and statuses.
export async function startMockFront ({ host, port, prismUrl, checkBody }: MockFrontOptions): Promise<Server> {
  const server = createServer((request, response) => {
    const method = request.method ?? 'GET'
    // A target Node parses but URL does not (`//[`) reads no operation's path: Prism answers it.
    const pathname = URL.canParse(request.url ?? '/', 'http://mock') ? new URL(request.url ?? '/', 'http://mock').pathname : undefined
    // A body its operation does not read is discarded as it arrives, of any size, and Prism is
    // sent the request without it, at once, as the service answers without waiting for it.
    if (pathname !== undefined && !checkBody.readsBody(method, pathname)) {
      request.resume()
      forwardToPrism(prismUrl, request, undefined, response)
      return
    }
    void readBody(request).then((body) => {
      if (body === undefined) {
        answerError(response, new ContentTooLargeError(bodyLimit), { connection: 'close' })
        return
      }
      const refusal = pathname === undefined ? undefined : checkBody.check(method, pathname, request.headers, body)
      if (refusal === undefined) forwardToPrism(prismUrl, request, body, response)
      else answerError(response, refusal)
    }).catch(() => {
      // A body that could not be read (the client went away), or a check that failed.
      if (response.headersSent) response.destroy()
      else answerError(response, new InternalError())
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => { server.off('error', reject); resolve() })
  })
  return server
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

function answerError (response: ServerResponse, apiError: ApiError, headers: Record<string, string> = {}): void {
  response.writeHead(apiError.statusCode, {
    ...apiError.headers, ...headers, 'content-type': 'application/json; charset=utf-8',
  })
  response.end(JSON.stringify(errorBody(apiError)))
}

// The request as the service reads it: with its body, or, for an operation that reads none, without.
function forwardToPrism (prismUrl: URL, request: IncomingMessage, body: Buffer | undefined, response: ServerResponse): void {
  const headers = { ...request.headers, 'content-length': String(body?.length ?? 0) }
  delete headers['transfer-encoding']
  if (body === undefined) {
    delete headers['content-type']
    delete headers['content-encoding']
  }
  const toPrism = httpRequest(new URL(request.url ?? '/', prismUrl), { method: request.method, headers }, (fromPrism) => {
    response.writeHead(fromPrism.statusCode ?? 502, fromPrism.headers)
    fromPrism.pipe(response)
  })
  // Prism gone mid-answer: the client's connection is cut, as a proxy does; before it, a 500.
  toPrism.on('error', () => {
    if (response.headersSent) response.destroy()
    else answerError(response, new InternalError())
  })
  toPrism.end(body)
}
