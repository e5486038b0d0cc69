import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { assertExchangeMatchesSpec } from './support/contract.js'
import { freePort } from './support/free-port.js'

// `npm run mock` is Stoplight Prism serving openapi.yaml alone: consumers can build against the
// contract before any service is deployed. Here it runs as that script runs it, on a free port.

const projectRoot = join(import.meta.dirname, '..')
const prism = join(projectRoot, 'node_modules', '.bin', 'prism')

async function startMock (t: Test): Promise<string> {
  const port = await freePort()
  const child: ChildProcess = spawn(prism, ['mock', 'openapi.yaml', '--host', '127.0.0.1', '--port', String(port)], {
    cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  t.teardown(() => { child.kill('SIGKILL') })
  const deadline = Date.now() + 60_000
  while (!output.includes('Prism is listening')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the mock did not start:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return `http://127.0.0.1:${port}`
}

async function post (t: Test, baseUrl: string, body: unknown, headers: Record<string, string>): Promise<{ status: number, body: unknown }> {
  const response = await fetch(`${baseUrl}/plants`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  })
  const bodyText = await response.text()
  assertExchangeMatchesSpec(t, {
    method: 'POST', url: '/plants', statusCode: response.status, contentType: response.headers.get('content-type') ?? undefined, bodyText,
  })
  return { status: response.status, body: JSON.parse(bodyText) }
}

t.test('the mock answers from the spec: its examples, its statuses, its security', async (t) => {
  const baseUrl = await startMock(t)
  const token = { authorization: 'Bearer any-token-will-do' }
  t.same(await post(t, baseUrl, { id: 1, name: 'Fern' }, token), { status: 200, body: { name: 'Monstera', tag: 'aroid' } },
    'the first 200 example')
  t.same(await post(t, baseUrl, { id: 1, name: 'Fern' }, { ...token, prefer: 'example=withoutTag' }),
    { status: 200, body: { name: 'Fern' } }, 'another example, asked for by name')
  t.same(await post(t, baseUrl, { id: 1, name: 'Fern' }, { ...token, prefer: 'code=409' }),
    { status: 409, body: { error: 40901, message: 'a plant with id 10 already exists with a different name or tag' } })
  t.same(await post(t, baseUrl, { id: 1 }, token), { status: 400, body: { error: 40003, message: 'body.name is required' } },
    'a body the schema refuses')
  t.same(await post(t, baseUrl, { id: 1, name: 'Fern' }, {}),
    { status: 401, body: { error: 40101, message: 'bearer credentials are required' } }, 'no token')
})
