import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import ts from 'typescript'
import { parse as parseYaml } from 'yaml'
import { assertExchangeMatchesSpec, assertWebhookMatchesSpec } from './support/contract.js'
import { type DocSnippet, docSnippets, projectRoot, shellCommands } from './support/doc-snippets.js'
import { buildTestApp } from './support/helper.js'
import { runCommand } from './support/run-command.js'
import { type RunningServer, startServer } from './support/running-server.js'
import { testFolder } from './support/test-folder.js'
import { startWebhookReceiver } from './support/webhook-receiver.js'
import { registerEndpoint, webhookTestSettings } from './support/webhooks.js'

// Every block of the README and docs/ that names a language is pasted and run here, or its
// command is one CI runs (named below, and checked to be there); a block without a language is
// output shown for comparison. A new block with a language and no runner here fails the last test.
// The only edits made to a pasted block are the substitutions each test lists (the port a test's
// service listens on, the token it printed, a URL that must not leave this machine), and each is
// checked to be in the block, so that none goes stale unnoticed.

const snippets = docSnippets()
const claimed = new Set<DocSnippet>()

// The one block of `file` in `language` whose first line starts with `start`, marked as run.
// A start of several lines matches the block's first lines.
function snippet (file: string, language: string, start: string): DocSnippet {
  const found = snippets.filter((block) => block.file === file && block.language === language && block.text.trimStart().startsWith(start))
  if (found.length !== 1) throw new Error(`${found.length} blocks of ${file} in ${language} start with ${JSON.stringify(start)}`)
  claimed.add(found[0]!)
  return found[0]!
}

function substituted (t: Test, block: DocSnippet, substitutions: ReadonlyArray<readonly [string, string]>): string {
  let text = block.text
  for (const [from, to] of substitutions) {
    t.ok(text.includes(from), `${block.file}:${block.line} still has ${from}, which the test replaces`)
    text = text.replaceAll(from, to)
  }
  return text
}

// Runs a shell block's commands in one bash, in order, and returns each command's output.
async function runShell (t: Test, text: string, environment: Record<string, string>, cwd: string): Promise<Array<{ command: string, expected: string[], output: string }>> {
  const commands = shellCommands(text)
  const marker = '@@@ next command @@@'
  const script = commands.map(({ command }) => `echo '${marker}'\n${command}`).join('\n')
  // The options are set in the script, after bash has read any startup file it reads.
  const result = await runCommand('bash', ['-c', `set -euo pipefail\n${script}`], {
    cwd, timeout: 60_000, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...environment },
  })
  t.equal(result.code, 0, `the block runs to its end${result.code === 0 ? '' : `:\n${result.stdout}\n${result.stderr}`}`)
  const outputs = result.stdout.split(`${marker}\n`).slice(1)
  return commands.map((command, index) => ({ ...command, output: outputs[index] ?? '' }))
}

interface CurlAnswer { statusLine: string, statusCode: number, headers: Record<string, string>, body: string }

// curl -i's output: the status line, the headers, a blank line, the body.
function curlAnswer (output: string): CurlAnswer {
  const [head = '', body = ''] = output.split(/\r\n\r\n/, 2)
  const [statusLine = '', ...headerLines] = head.split('\r\n')
  const headers = Object.fromEntries(headerLines.map((line) => {
    const colon = line.indexOf(':')
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
  }))
  return { statusLine, statusCode: Number(statusLine.split(' ')[1]), headers, body }
}

// Checks a README comment such as `HTTP/1.1 200 OK   …   ETag: "x"   …   {"name":"Monstera"}
// (a remark)` against what curl -i printed: the status line, each header shown, the whole body.
function checkShownAnswer (t: Test, shown: string, answer: CurlAnswer): void {
  for (const part of shown.replace(/\s+\([^)]*\)\s*$/, '').split('…').map((text) => text.trim()).filter((text) => text !== '')) {
    if (part.startsWith('HTTP/')) {
      t.equal(answer.statusLine, part, 'the status line shown')
    } else if (part.startsWith('{') || part.startsWith('[')) {
      t.same(JSON.parse(answer.body), JSON.parse(part), 'the body shown')
    } else {
      const header = /^([\w-]+): (.*)$/.exec(part)
      t.ok(header, `"${part}" is a status line, a header or a body`)
      if (header !== null) t.equal(answer.headers[header[1]!.toLowerCase()], header[2], `the ${header[1]} shown`)
    }
  }
}

// The service as the README starts it (npm start's command; `npm install` is CI's npm ci): a
// database of its own, no credentials configured, so it prints the token of its first start.
async function serviceAsTheReadmeStartsIt (t: Test, environment: Record<string, string> = {}): Promise<RunningServer & { token: string }> {
  const server = await startServer(t, { DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, ...environment })
  const printed = /API token: (ps_\w+)/.exec(server.output())
  if (printed === null) throw new Error(`the first start printed no token:\n${server.output()}`)
  return { ...server, token: printed[1]! }
}

t.test('README: the quick start\'s curl commands answer what the README shows', async (t) => {
  snippet('README.md', 'sh', 'npm install && npm start') // npm start's command is startServer's
  const block = snippet('README.md', 'sh', 'TOKEN=')
  const server = await serviceAsTheReadmeStartsIt(t)
  const text = substituted(t, block, [['TOKEN=ps_4fQ2k9...', `TOKEN=${server.token}`], ['127.0.0.1:3000', `127.0.0.1:${server.port}`]])
  const commands = await runShell(t, text, {}, testFolder(t))
  const curls = commands.filter(({ command }) => command.startsWith('curl'))
  t.equal(curls.length, 4)
  for (const { command, expected, output } of curls) {
    t.equal(expected.length, 1, `what ${command.split('\n')[0]} answers is shown`)
    const answer = curlAnswer(output)
    checkShownAnswer(t, expected[0]!, answer)
    const method = /-X (\w+)/.exec(command)?.[1] ?? (command.includes(' -d ') ? 'POST' : 'GET')
    const url = /http:\/\/127\.0\.0\.1:\d+(\/[^'" ]*)/.exec(command)![1]!
    assertExchangeMatchesSpec(t, {
      method, url, statusCode: answer.statusCode, contentType: answer.headers['content-type'], bodyText: answer.body, headers: answer.headers,
    })
  }
})

t.test('README: the typed client\'s example creates the plant and prints its name', async (t) => {
  const block = snippet('README.md', 'ts', "import { createPlantStoreClient } from '@plant-store/client'")
  const server = await serviceAsTheReadmeStartsIt(t)
  const folder = snippetProject(t)
  const text = substituted(t, block, [['127.0.0.1:3000', `127.0.0.1:${server.port}`]])
  const result = await runTypeScript(folder, text, { TOKEN: server.token })
  t.equal(result.code, 0, result.stderr)
  t.equal(result.stdout, 'Monstera\n')
})

// A folder with the packages the snippets import: standardwebhooks as installed here, and
// @plant-store/client as its package exports the built client (npm run pack:client packs the same module).
function snippetProject (t: Test): string {
  const folder = testFolder(t)
  writeFileSync(join(folder, 'package.json'), `${JSON.stringify({ private: true, type: 'module' })}\n`)
  mkdirSync(join(folder, 'node_modules', '@plant-store', 'client'), { recursive: true })
  symlinkSync(join(projectRoot, 'node_modules', 'standardwebhooks'), join(folder, 'node_modules', 'standardwebhooks'))
  const client = join(folder, 'node_modules', '@plant-store', 'client')
  writeFileSync(join(client, 'package.json'), `${JSON.stringify({ name: '@plant-store/client', type: 'module', exports: './index.js' })}\n`)
  writeFileSync(join(client, 'index.js'), `export * from ${JSON.stringify(join(projectRoot, 'dist', 'src', 'client', 'plant-store-client.js'))}\n`)
  return folder
}

// Compiles a TypeScript snippet as a reader's project would (type imports erased) and runs it.
async function runTypeScript (folder: string, source: string, environment: Record<string, string>): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } })
  writeFileSync(join(folder, 'snippet.mjs'), outputText)
  return runCommand(process.execPath, ['snippet.mjs'], { cwd: folder, timeout: 20_000, env: { PATH: process.env.PATH ?? '', ...environment } })
}

t.test('docs/webhooks.md: registering an endpoint answers 201 with the fields shown', async (t) => {
  const block = snippet('docs/webhooks.md', 'sh', 'curl -s -X POST')
  // Its URL is not this machine's: the instance records the deliveries it owes and sends none.
  const server = await serviceAsTheReadmeStartsIt(t, { WEBHOOK_DELIVERIES: 'off' })
  const text = substituted(t, block, [['127.0.0.1:3000', `127.0.0.1:${server.port}`]])
  const [registration] = await runShell(t, `curl -s -w '\\n%{http_code}' ${text.slice('curl -s '.length)}`, { TOKEN: server.token }, testFolder(t))
  const [bodyText = '', status = ''] = registration!.output.trimEnd().split(/\n(?=\d+$)/)
  const shown = registration!.expected.join(' ')
  t.equal(status, /^(\d{3}) /.exec(shown)![1], 'the status shown')
  const body = JSON.parse(bodyText) as Record<string, unknown>
  const fields = [...shown.matchAll(/"(\w+)":("[^"]*"|\[[^\]]*\]|\d+)/g)]
  t.same(Object.keys(body).sort(), fields.map(([, name]) => name).sort(), 'the fields shown, and no others')
  for (const [, name = '', value = ''] of fields) {
    if (!value.includes('…')) t.same(body[name], JSON.parse(value), `${name} as shown`)
  }
  t.match(body.secret, /^whsec_/)
  assertExchangeMatchesSpec(t, { method: 'POST', url: '/webhook-endpoints', statusCode: Number(status), contentType: 'application/json', bodyText })
})

// A delivery the service made, to a receiver on this machine, for the verification snippets.
async function realDelivery (t: Test): Promise<{ secret: string, body: string, headers: Record<string, string> }> {
  const app = await buildTestApp(t, webhookTestSettings)
  const receiver = await startWebhookReceiver(t)
  const { secret } = await registerEndpoint(t, app, receiver.url, ['newPlant'])
  await app.createPlant({ id: 10, name: 'Monstera', tag: 'aroid' })
  const [delivery] = await receiver.waitFor(1)
  const headers = Object.fromEntries(Object.entries(delivery!.headers).map(([name, value]) => [name, String(value)]))
  return { secret, body: delivery!.body, headers }
}

t.test('docs/webhooks.md: the message shown is what the service sends', async (t) => {
  const block = snippet('docs/webhooks.md', 'http', 'POST /your/endpoint HTTP/1.1')
  const [head = '', body = ''] = block.text.split('\n\n')
  const shownHeaders = Object.fromEntries(head.split('\n').slice(1).filter((line) => !line.includes('(when')).map((line) => {
    const [name = '', value = ''] = line.split(/:\s*/, 2)
    return [name, value]
  }))
  const delivery = await realDelivery(t)
  for (const name of Object.keys(shownHeaders)) t.ok(name in delivery.headers, `the service sends ${name}`)
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) t.ok(name in shownHeaders, `${name} is shown`)
  assertWebhookMatchesSpec(t, 'newPlant', shownHeaders, body)
  t.same(Object.keys(JSON.parse(body) as object), Object.keys(JSON.parse(delivery.body) as object), 'the body shown has the fields sent, in their order')
})

t.test('docs/webhooks.md: the TypeScript verification verifies a real delivery', async (t) => {
  const block = snippet('docs/webhooks.md', 'ts', "import { Webhook } from 'standardwebhooks'")
  const delivery = await realDelivery(t)
  const folder = snippetProject(t)
  // The snippet names rawBody and headers as a receiver's framework gives them.
  const given = `const rawBody = ${JSON.stringify(delivery.body)}\nconst headers = ${JSON.stringify(delivery.headers)}\n`
  const result = await runTypeScript(folder, given + block.text, { PLANT_STORE_WEBHOOK_SECRET: delivery.secret })
  t.equal(result.code, 0, result.stderr)
  t.equal(result.stdout, 'new plant Monstera\n')
  const forged = await runTypeScript(folder, given.replace('Monstera', 'Fern') + block.text, { PLANT_STORE_WEBHOOK_SECRET: delivery.secret })
  t.not(forged.code, 0, 'and refuses a forged body')
})

// The Python snippet's library, installed as its install line says, in a virtualenv of its own
// under .tools/ (kept between runs).
const pythonVenv = join(projectRoot, '.tools', 'docs-python')

t.test('docs/webhooks.md: the Python verification verifies a real delivery', async (t) => {
  const block = snippet('docs/webhooks.md', 'python', 'import os')
  const prose = readFileSync(join(projectRoot, 'docs', 'webhooks.md'), 'utf8')
  const install = /\(`(pip install [^`]+)`\)/.exec(prose)
  t.ok(install, 'the install line is given')
  const python = join(pythonVenv, 'bin', 'python')
  const pip = join(pythonVenv, 'bin', 'pip')
  if (!existsSync(python)) {
    const venv = await runCommand('python3', ['-m', 'venv', pythonVenv], { timeout: 60_000 })
    t.equal(venv.code, 0, `python3 -m venv: ${venv.stderr}`)
  }
  const installed = await runCommand(pip, [...install![1]!.split(' ').slice(1), '--quiet', '--disable-pip-version-check'], { timeout: 120_000 })
  t.equal(installed.code, 0, `${install![1]}: ${installed.stderr}`)
  const delivery = await realDelivery(t)
  const given = `raw_body = ${JSON.stringify(delivery.body)}\nheaders = ${JSON.stringify(delivery.headers)}\n`
  const folder = testFolder(t)
  writeFileSync(join(folder, 'snippet.py'), given + block.text)
  const result = await runCommand(python, [join(folder, 'snippet.py')], { timeout: 20_000, env: { PATH: process.env.PATH ?? '', PLANT_STORE_WEBHOOK_SECRET: delivery.secret } })
  t.equal(result.code, 0, result.stderr)
  t.equal(result.stdout, 'new plant Monstera\n')
})

// `npm run token --` is `node scripts/build.mjs --quiet && node dist/src/token-cli.js`, and
// `npm test` has built it: the test runs the second half, so that parallel test files never
// build at once.
const tokenCommand = ['npm run token --', `node ${join(projectRoot, 'dist', 'src', 'token-cli.js')}`] as const

t.test('docs/credentials.md: the token commands run in order, and list shows the columns shown', async (t) => {
  const commands = snippet('docs/credentials.md', 'sh', 'npm run token -- create --name ci --expires 30d')
  const rotation = snippet('docs/credentials.md', 'sh', 'npm run token -- create --name ci-2026-12')
  const folder = testFolder(t)
  const environment = { DATABASE_URL: `sqlite:${folder}/plants.db` }
  const ran = await runShell(t, substituted(t, commands, [tokenCommand]), environment, folder)
  const list = ran.find(({ command }) => command.includes(' list'))!
  const shownOutput = snippets.find((block) => block.file === 'docs/credentials.md' && block.language === '' && block.text.includes('$ npm run token -- list'))!
  const shownHeader = shownOutput.text.split('\n').find((line) => line.startsWith('NAME'))!
  t.same(list.output.split('\n')[0]!.split(/\s{2,}/), shownHeader.split(/\s{2,}/), 'the columns shown')
  t.match(list.output, /\ndashboard\s.*plants:read\n/)
  // The rotation is of a token named ci that is still in use.
  const rotationFolder = testFolder(t)
  const rotationEnvironment = { DATABASE_URL: `sqlite:${rotationFolder}/plants.db` }
  await runShell(t, `${tokenCommand[1]} create --name ci`, rotationEnvironment, rotationFolder)
  const rotated = await runShell(t, substituted(t, rotation, [tokenCommand]), rotationEnvironment, rotationFolder)
  t.match(rotated[1]!.output, /\nci-2026-12\s.*active/)
})

// Commands that take minutes, or a server or identity provider of their own: CI runs each as the
// docs write it (.ci/run and the test files named), or the command only needs the server these
// tests start in their own way. Each is checked to be run where it says.
const runElsewhere: ReadonlyArray<{ file: string, language: string, start: string, ranBy: string, runs: RegExp }> = [
  { file: 'docs/testing.md', language: 'sh', start: 'npm test', ranBy: '.ci/run', runs: /npm test -- --reporter=tap/ },
  { file: 'docs/fuzzing.md', language: 'sh', start: 'npm run fuzz', ranBy: '.ci/run', runs: /npm run fuzz/ },
  { file: 'docs/sdks.md', language: 'sh', start: 'npm run sdk', ranBy: '.ci/run', runs: /npm run test:sdk/ },
  { file: 'docs/conformance.md', language: 'sh', start: 'npm run check:conformance', ranBy: 'test/conformance-check.test.ts', runs: /'--url', .*'--token'/ },
  { file: 'docs/postgresql.md', language: 'sh', start: 'npm install && DATABASE_URL=postgres://', ranBy: 'test/support/test-databases.ts', runs: /postgres:\/\/postgres@127\.0\.0\.1:5432\/test/ },
  { file: 'docs/postgresql.md', language: 'sh', start: 'npm run build', ranBy: 'test/scale-out.test.ts', runs: /DATABASE_URL/ },
  { file: 'docs/postgresql.md', language: 'sh', start: 'node scripts/ha-cluster.mjs start', ranBy: 'test/reliability/support/ha-cluster.ts', runs: /\[script, 'start', '--dir', folder, '--base-port'[\s\S]*\[script, 'fault', fault, '--dir', folder\]/ },
  { file: 'docs/credentials.md', language: 'sh', start: 'JWT_ISSUER=', ranBy: 'test/auth/jwt-remote-keys.test.ts', runs: /JWT_JWKS_URL/ },
  { file: 'docs/benchmark.md', language: 'sh', start: 'npm run bench ', ranBy: 'test/bench-command-line.test.ts', runs: /bench\/run-benchmark\.ts/ },
  { file: 'docs/postgresql.md', language: 'sh', start: 'node dist/bench/run-benchmark.js --postgres-url', ranBy: 'test/bench-command-line.test.ts', runs: /bench\/run-benchmark\.ts/ },
]

t.test('the commands that take minutes, or a server of their own, are run where the docs say', async (t) => {
  const scripts = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
  for (const { file, language, start, ranBy, runs } of runElsewhere) {
    const block = snippet(file, language, start)
    t.match(readFileSync(join(projectRoot, ranBy), 'utf8'), runs, `${file}:${block.line} is run by ${ranBy}`)
    for (const [, name] of block.text.matchAll(/npm run ([\w:-]+)/g)) t.ok(name! in scripts, `npm run ${name!} is a script`)
  }
})

t.test('docs/conformance.md: the CI jobs are YAML that run the conformance check with its settings', async (t) => {
  const scripts = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
  const checkScript = readFileSync(join(projectRoot, 'scripts', 'check-conformance.mjs'), 'utf8')
  for (const start of ['conformance:\n    needs: deploy', 'conformance:\n  stage: post-deploy']) {
    const block = snippet('docs/conformance.md', 'yaml', start)
    t.doesNotThrow(() => parseYaml(block.text), `${block.file}:${block.line} is YAML`)
    for (const [, name] of block.text.matchAll(/npm run ([\w:-]+)/g)) t.ok(name! in scripts, `npm run ${name!} is a script`)
    for (const [, setting] of block.text.matchAll(/\b(PLANT_STORE_TOKEN)\b/g)) t.ok(checkScript.includes(setting!), `the check reads ${setting!}`)
  }
})

t.test('every block with a language is run by a test above', async (t) => {
  const unclaimed = snippets.filter((block) => block.language !== '' && !claimed.has(block))
  t.same(unclaimed.map(({ file, line }) => `${file}:${line}`), [], 'a block with a language needs a test that runs it')
})
