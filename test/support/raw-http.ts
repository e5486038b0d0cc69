import { connect } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import type { AppConfig } from '../../src/app.js'
import { assertExchangeMatchesSpec } from './contract.js'
import { buildTestApp, testToken } from './helper.js'

// A client on a real socket, writing raw HTTP/1.1 and reading every response on the connection:
// what inject cannot show (Expect, Host, pipelining, framing, timeouts).

export interface RawResponse {
  readonly statusCode: number
  readonly headers: Record<string, string>
  readonly body: string
}

// Every response on the connection, in order, interim (100 Continue) ones included.
export function parseResponses (raw: string): RawResponse[] {
  const responses: RawResponse[] = []
  let rest = raw
  while (rest.length > 0) {
    const headerEnd = rest.indexOf('\r\n\r\n')
    if (headerEnd === -1) break
    const [statusLine = '', ...headerLines] = rest.slice(0, headerEnd).split('\r\n')
    const headers = Object.fromEntries(headerLines.map((line) => {
      const colon = line.indexOf(':')
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
    }))
    const length = Number(headers['content-length'] ?? 0)
    const bodyStart = headerEnd + 4
    responses.push({ statusCode: Number(statusLine.split(' ')[1]), headers, body: rest.slice(bodyStart, bodyStart + length) })
    rest = rest.slice(bodyStart + length)
  }
  return responses
}

export interface RawClient {
  readonly write: (text: string) => void
  // Everything received until the server closes the connection (or the time runs out).
  readonly received: (timeoutMs?: number) => Promise<RawResponse[]>
  readonly receivedSoFar: () => RawResponse[]
}

// beforeListen may add hooks of the test's own to the app, as it still can before it listens.
export async function startListening (
  t: Test, overrides: Partial<AppConfig> = {}, beforeListen: (app: FastifyInstance) => void = () => undefined
): Promise<{ open: () => RawClient, databaseFile: string, app: FastifyInstance, port: number }> {
  const { app, databaseFile } = await buildTestApp(t, overrides)
  beforeListen(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  const open = (): RawClient => {
    const socket = connect(port, '127.0.0.1')
    t.teardown(() => { socket.destroy() })
    let raw = ''
    socket.on('data', (chunk) => { raw += chunk.toString('latin1') })
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    return {
      write: (text) => { socket.write(text) },
      received: async (timeoutMs = 5000) => {
        await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, timeoutMs))])
        return parseResponses(raw)
      },
      receivedSoFar: () => parseResponses(raw),
    }
  }
  return { open, databaseFile, app, port }
}

export function request (method: string, path: string, headers: Record<string, string>, body = ''): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`)
  return [`${method} ${path} HTTP/1.1`, ...lines, '', body].join('\r\n')
}

export function createHeaders (extra: Record<string, string> = {}): Record<string, string> {
  return { Host: 'plants.test', Authorization: `Bearer ${testToken}`, 'Content-Type': 'application/json', ...extra }
}

export function checkAgainstSpec (t: Test, method: string, path: string, response: RawResponse): unknown {
  t.equal(response.headers['x-content-type-options'], 'nosniff', `${response.statusCode} has nosniff`)
  t.ok(response.headers['x-request-id'], `${response.statusCode} has a request id`)
  return assertExchangeMatchesSpec(t, {
    method, url: path, statusCode: response.statusCode, contentType: response.headers['content-type'], bodyText: response.body,
  })
}
