import { spawn } from 'node:child_process'
import t from 'tap'
import { createPlant, serverArguments, startServer } from './support/running-server.js'
import { testFolder } from './support/test-folder.js'

// The service's start, as a process: the managed token of a first start, settings that stop it
// with a message naming them, the summary it logs and the format of its logs.

const configuredToken = 'server-test-token-0123456789'

t.test('with no credentials configured, the first start creates a managed token "default", shows it once, and it survives restarts', async (t) => {
  const environment = { DATABASE_URL: `sqlite:${testFolder(t)}/plants.db` }
  const first = await startServer(t, environment)
  const printed = /API token: (ps_[0-9A-Za-z]{38})\n/.exec(first.output())
  t.ok(printed, 'a managed token is printed')
  const token = printed?.[1] ?? ''
  t.equal(first.output().split(token).length - 1, 1, 'printed exactly once')
  t.match(first.output(), /named "default" was created/)
  t.equal((await createPlant(first.baseUrl, token, { id: 1, name: 'Fern' })).status, 200)
  t.equal((await createPlant(first.baseUrl, configuredToken, { id: 2, name: 'Fern' })).status, 401, 'no other token is accepted')
  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0)

  const second = await startServer(t, environment)
  t.notMatch(second.output(), /API token:/, 'a later start prints no token')
  t.notMatch(second.output(), /ps_[0-9A-Za-z]{38}/, 'nor any part of one')
  t.match(second.output(), /1 active managed token\(s\).*\n.*npm run token -- create --name/, 'it says how to create another')
  const created = await createPlant(second.baseUrl, token, { id: 1, name: 'Fern' })
  t.equal(created.status, 200, 'the first start\'s token still works')
  t.same(await created.json(), { name: 'Fern' })
  second.child.kill('SIGTERM')
  t.equal(await second.exited, 0)
})

t.test('with API_TOKENS set, no managed token is created and nothing is printed about one', async (t) => {
  const server = await startServer(t, { DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, API_TOKENS: configuredToken })
  t.notMatch(server.output(), /API token:|managed token/)
  t.equal((await createPlant(server.baseUrl, configuredToken, { id: 1, name: 'Fern' })).status, 200)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
})

t.test('a bad setting stops start-up with a message naming the variable', async (t) => {
  const child = spawn(process.execPath, serverArguments, { env: { PATH: process.env.PATH ?? '', PORT: 'abc' } })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const code = await new Promise((resolve) => child.on('exit', resolve))
  t.equal(code, 1)
  t.match(stderr, /PORT="abc" is not valid: expected an integer from 0 to 65535/)
})

// Starts the service with these settings and waits for it to exit by itself.
async function failedStart (environment: Record<string, string>): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawn(process.execPath, serverArguments, { env: { PATH: process.env.PATH ?? '', API_TOKENS: configuredToken, ...environment } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  return { code, stdout, stderr }
}

t.test('a port already in use stops start-up with exit code 1 and one line naming PORT', async (t) => {
  const folder = testFolder(t)
  const first = await startServer(t, { DATABASE_URL: `sqlite:${folder}/first.db`, API_TOKENS: configuredToken })
  const second = await failedStart({ PORT: String(first.port), DATABASE_URL: `sqlite:${folder}/second.db` })
  t.equal(second.code, 1)
  t.equal(second.stderr, `the service could not listen: PORT=${first.port} on HOST="127.0.0.1" is already in use by another process; stop it, or set PORT to a free port\n`)
})

t.test('a HOST that is not an address of this machine stops start-up with exit code 1 and one line naming HOST', async (t) => {
  const folder = testFolder(t)
  const unresolvable = await failedStart({ HOST: 'example.invalid', PORT: '0', DATABASE_URL: `sqlite:${folder}/a.db` })
  t.equal(unresolvable.code, 1)
  t.equal(unresolvable.stderr, 'the service could not listen: HOST="example.invalid" does not resolve to an address; set HOST to an address of this machine, such as 127.0.0.1 or 0.0.0.0\n')
  // 192.0.2.0/24 is reserved for documentation: never an address of this machine.
  const foreign = await failedStart({ HOST: '192.0.2.1', PORT: '0', DATABASE_URL: `sqlite:${folder}/b.db` })
  t.equal(foreign.code, 1)
  t.equal(foreign.stderr, 'the service could not listen: HOST="192.0.2.1" is not an address of this machine; set HOST to one of its addresses, such as 127.0.0.1 or 0.0.0.0\n')
})

t.test('a start logs one summary (listening URL, API reference, store, migrations) and no warning', async (t) => {
  const folder = testFolder(t)
  const first = await startServer(t, { DATABASE_URL: `sqlite:${folder}/plants.db`, API_TOKENS: configuredToken, BASE_PATH: '/api' })
  const lines = first.output().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number, msg: string })
  t.same(lines.filter((line) => line.level >= 40), [], 'no warning or error')
  t.same(lines.map((line) => line.msg), [
    `Server listening at ${first.baseUrl}; API reference at ${first.baseUrl}/api/docs; ` +
      `store: SQLite file ${folder}/plants.db, schema version 9, migrations 1, 2, 3, 4, 5, 6, 7, 8, 9 applied now`,
  ], 'one line says it all')
  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0)

  const second = await startServer(t, { DATABASE_URL: `sqlite:${folder}/plants.db`, API_TOKENS: configuredToken })
  t.match(second.output(), `store: SQLite file ${folder}/plants.db, schema version 9, up to date"`, 'a later start applies none')
})

t.test('LOG_FORMAT=pretty logs readable lines; JSON is the default when standard output is not a terminal', async (t) => {
  const server = await startServer(t, { DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, API_TOKENS: configuredToken, LOG_FORMAT: 'pretty' })
  t.equal((await createPlant(server.baseUrl, configuredToken, { id: 1, name: 'Fern' })).status, 200)
  t.equal((await createPlant(server.baseUrl, 'not-a-token', { id: 2, name: 'Fern' })).status, 401)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  const lines = server.output().split('\n').filter((line) => line !== '')
  t.notOk(lines.some((line) => line.startsWith('{')), 'no JSON line')
  t.match(lines, [
    /^\d\d:\d\d:\d\d\.\d{3} INFO {2}Server listening at http:\/\/127\.0\.0\.1:\d+; API reference at /,
    /^\d\d:\d\d:\d\d\.\d{3} INFO {2}POST \/plants 200 \d+\.\d ms by api-token:\d+ request completed reqId=[0-9a-f-]{36}$/,
    /^\d\d:\d\d:\d\d\.\d{3} INFO {2}POST \/plants 401 \d+\.\d ms request completed reqId=[0-9a-f-]{36} failure=\{"code":40102,"message":"the bearer token is not valid"\}$/,
    /^\d\d:\d\d:\d\d\.\d{3} INFO {2}shutting down signal=SIGTERM$/,
  ])
})
