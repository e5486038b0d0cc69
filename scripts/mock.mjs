// `npm run mock [-- --port <port>] [--token <token>]...`: a mock of the API from openapi.yaml alone, on 127.0.0.1 at
// --port, else MOCK_PORT, else 4010. Stoplight Prism answers with the spec's examples, on a port
// of its own behind a small front (src/mock/mock-front.ts, built by `npm run build`), which
// answers what the service would refuse itself, with the service's own code (credentials, paths,
// queries, headers, bodies: Prism answers every refusal with the 400's first example, and never
// answers a body that is not JSON), and serves the spec at /openapi.yaml and /openapi.json.
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = new URL('..', import.meta.url)
const host = '127.0.0.1'

// --token, once or more: the tokens accepted, as the service's API_TOKENS; without it, any.
const { values } = parseArgs({ options: { port: { type: 'string' }, token: { type: 'string', multiple: true } } })
const portText = values.port ?? process.env.MOCK_PORT ?? '4010'
if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
  process.stderr.write(`${values.port === undefined ? 'MOCK_PORT' : '--port'}=${JSON.stringify(portText)} is not valid: expected an integer from 0 to 65535\n`)
  process.exit(2)
}

const { startMockFront } = await import(new URL('dist/src/mock/mock-front.js', root).href)
const { createRequestCheck } = await import(new URL('dist/src/mock/request-check.js', root).href)
const { loadOpenApiDocument } = await import(new URL('dist/src/openapi/openapi-document.js', root).href)

const prismPort = await freePort()
const prism = spawn(fileURLToPath(new URL('node_modules/.bin/prism', root)),
  ['mock', 'openapi.yaml', '--host', host, '--port', String(prismPort)],
  { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] })
prism.on('exit', (code, signal) => {
  process.stderr.write(`Prism stopped (${signal ?? `exit ${code}`})\n`)
  process.exit(1)
})
const stop = () => {
  prism.removeAllListeners('exit')
  prism.kill()
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)

// Prism's log is passed on, with the front's address for its own, which no one should call.
const prismOrigin = `http://${host}:${prismPort}`
const frontOrigin = `http://${host}:${portText}`
let prismOutput = ''
await new Promise((resolve) => {
  prism.stdout.on('data', (chunk) => {
    prismOutput += chunk.toString()
    for (const line of prismOutput.split('\n').slice(0, -1)) {
      if (line.includes('Prism is listening')) resolve()
      else process.stdout.write(`${line.replaceAll(prismOrigin, frontOrigin)}\n`)
    }
    prismOutput = prismOutput.slice(prismOutput.lastIndexOf('\n') + 1)
  })
})

const openApi = loadOpenApiDocument()
try {
  const front = await startMockFront({
    host,
    port: Number(portText),
    prismUrl: new URL(`http://${host}:${prismPort}`),
    check: createRequestCheck(openApi.document, { tokens: values.token }),
    openApi,
  })
  process.stdout.write(`Mock of openapi.yaml listening on http://${host}:${front.address().port}\n`)
} catch (error) {
  process.stderr.write(`the mock cannot listen on ${host}:${portText}: ${error.message}\n`)
  prism.removeAllListeners('exit')
  prism.kill()
  process.exit(1)
}

async function freePort () {
  const server = createServer()
  await new Promise((resolve) => server.listen(0, host, resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}
