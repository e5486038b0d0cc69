import { readFileSync } from 'node:fs'
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { parse, stringify } from 'yaml'
import { freePort } from './support/free-port.js'
import { runCommand, type CommandResult } from './support/run-command.js'
import { startMock } from './support/running-mock.js'
import { startServer } from './support/running-server.js'
import { testFolder } from './support/test-folder.js'

// `npm run check:conformance` judges a running instance from outside: the document it serves,
// then Schemathesis' checks on its read-only operations. Here it is run as CI runs it, against
// the service as the other tests start it, against `npm run mock`, which must pass it as the
// service does, and against servers that break the contract on purpose: each failure must be
// named in its summary, and the token never printed.

const projectRoot = join(import.meta.dirname, '..')
const checkScript = join(projectRoot, 'scripts', 'check-conformance.mjs')
const token = 'conformance-token-0123456789'
// Few cases, so that the file runs in a minute or two: the check, not the service, is under test.
const maxExamples = '20'

async function checkConformance (url: string, ...extra: string[]): Promise<CommandResult> {
  return runCommand(process.execPath, [checkScript, '--url', url, '--token', token, '--max-examples', maxExamples, ...extra],
    { cwd: projectRoot, timeout: 600_000 })
}

async function startService (t: Test): Promise<string> {
  const service = await startServer(t, {
    DATABASE_URL: `sqlite:${join(testFolder(t), 'plants.db')}`,
    API_TOKENS: token,
    // Schemathesis sends many requests with missing or wrong tokens on purpose, as
    // test/fuzz/schemathesis.ts explains; the limits would turn them into 429s.
    RATE_LIMIT_PER_CREDENTIAL: '1000000000',
    RATE_LIMIT_PER_ADDRESS: '1000000000',
    RATE_LIMIT_FAILED_AUTH: '1000000000',
  })
  return service.baseUrl
}

// A server of the test's own, in front of the service: `answer` may answer a request itself
// (and return true), else the service does.
async function startFront (t: Test, serviceUrl: string, answer: (request: IncomingMessage, response: ServerResponse) => boolean): Promise<string> {
  const server: Server = createServer((incoming, response) => {
    if (answer(incoming, response)) return
    const toService = request(new URL(incoming.url ?? '/', serviceUrl), { method: incoming.method, headers: incoming.headers }, (fromService) => {
      response.writeHead(fromService.statusCode ?? 502, fromService.headers)
      fromService.pipe(response)
    })
    toService.on('error', () => response.destroy())
    incoming.pipe(toService)
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return `http://127.0.0.1:${port}`
}

const output = ({ stdout, stderr }: CommandResult): string => stdout + stderr

t.test('the service as it is started conforms: exit 0, with the operations and the cases counted', async (t) => {
  const result = await checkConformance(await startService(t))
  t.equal(result.code, 0, 'exit 0', { output: output(result) })
  t.match(result.stdout, /^Served \/openapi\.yaml: the same document as openapi\.yaml$/m)
  t.match(result.stdout, /^Operations checked \(\d+\): GET \/, .*GET \/plants, GET \/plants\/\{id\}/m, 'the read-only operations, by name')
  t.notMatch(result.stdout, /POST|PUT|DELETE/, 'and none that writes')
  t.match(result.stdout, /^Cases run: [1-9]\d*$/m)
  t.match(result.stdout, /^PASS /m)
  t.ok(result.stdout.split('\n').length < 25, 'the summary fits a screen')
  t.notOk(output(result).includes(token), 'the token is not printed')
})

t.test('the mock conforms as the service does: exit 0', async (t) => {
  const port = await freePort()
  // With --token, the mock refuses other tokens as the service does, which ignored_auth checks.
  const result = await checkConformance(await startMock(t, port, { args: ['--port', String(port), '--token', token] }))
  t.equal(result.code, 0, 'exit 0', { output: output(result) })
  t.match(result.stdout, /^Served \/openapi\.yaml: the same document as openapi\.yaml$/m)
  t.match(result.stdout, /^PASS /m)
})

t.test('a plant answered without its required name fails the check, named with its answer', async (t) => {
  const serviceUrl = await startService(t)
  const wrong = await startFront(t, serviceUrl, (incoming, response) => {
    if (incoming.method !== 'GET' || !/^\/plants\/[^/?]+$/.test(incoming.url ?? '')) return false
    incoming.resume()
    response.writeHead(200, { 'content-type': 'application/json', etag: '"1"' })
    response.end('{"id": 1}')
    return true
  })
  // --verbose passes Schemathesis' own report on too: the token must not be in that either.
  const result = await checkConformance(wrong, '--verbose')
  t.equal(result.code, 1, 'exit 1', { output: output(result) })
  t.match(result.stdout, /^FAIL GET \/plants\/\{id\} response_schema_conformance: .*"name" is a required property/m,
    'the operation, the check and the violation')
  t.match(result.stdout, /^ {5}GET \/plants\/\S+ answered 200 \{"id": 1\}$/m, 'the request and the answer that showed it')
  t.match(result.stdout, /^FAIL \d+ failures? in \d+ of \d+ cases/m)
  t.notOk(output(result).includes(token), 'the token is not printed')
})

t.test('a served document other than openapi.yaml fails before Schemathesis runs, each difference named', async (t) => {
  const spec = parse(readFileSync(join(projectRoot, 'openapi.yaml'), 'utf8')) as { info: { version: string } }
  const served = stringify({ ...spec, info: { ...spec.info, version: '0.0.1' } })
  const wrong = await startFront(t, await startService(t), (incoming, response) => {
    if (incoming.url !== '/openapi.yaml') return false
    response.writeHead(200, { 'content-type': 'application/yaml' })
    response.end(served)
    return true
  })
  const result = await checkConformance(wrong)
  t.equal(result.code, 1, 'exit 1', { output: output(result) })
  t.match(result.stdout, /^FAIL the instance serves another document than openapi\.yaml/m)
  t.match(result.stdout, `/info/version: served "0.0.1", local ${JSON.stringify(spec.info.version)}`)
  t.notMatch(result.stdout, /Cases run/, 'Schemathesis is not run')
})

t.test('exit 2 when it cannot check: nothing listening, or no token', async (t) => {
  const unreachable = await checkConformance(`http://127.0.0.1:${await freePort()}`)
  t.equal(unreachable.code, 2)
  t.match(unreachable.stderr, /could not check: GET http:\/\/127\.0\.0\.1:\d+\/openapi\.yaml: .*ECONNREFUSED/)
  const withoutToken = await runCommand(process.execPath, [checkScript, '--url', 'http://127.0.0.1:1'],
    { cwd: projectRoot, timeout: 60_000, env: { PATH: process.env.PATH ?? '' } })
  t.equal(withoutToken.code, 2)
  t.match(withoutToken.stderr, /--token \(or PLANT_STORE_TOKEN\) is required/)
})
