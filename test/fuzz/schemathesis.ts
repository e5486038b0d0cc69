import { spawn } from 'node:child_process'
import { join } from 'node:path'
import pg from 'pg'
import t, { type Test } from 'tap'
import { installSchemathesis, schemathesisSettings } from '../../scripts/fuzz/install-schemathesis.mjs'
import { privatePostgres, privatePostgresSkipReason } from '../support/private-postgres.js'
import { startServer } from '../support/running-server.js'
import { postgresUrlWithSchema } from '../support/test-databases.js'
import { testFolder } from '../support/test-folder.js'

// `npm run fuzz`: Schemathesis, pinned in scripts/fuzz/requirements.txt and installed from PyPI
// into .tools/schemathesis, tests the live service against openapi.yaml with every check it has
// (scripts/fuzz/schemathesis.toml), once on a new SQLite file and once on a new PostgreSQL schema
// of a private cluster. Its output goes to stderr as it runs; a failure is also repeated in this
// test's diagnostics, with the curl command that reproduces it.

const projectRoot = join(import.meta.dirname, '..', '..')
const token = 'fuzz-token-0123456789'

// Runs Schemathesis to its end, its output kept and passed on to stderr line by line as it comes,
// each line headed by `label`: the backends are fuzzed at once, and their lines interleave.
async function runSchemathesis (executable: string, environment: NodeJS.ProcessEnv, label: string): Promise<{ code: number | null, output: string }> {
  const child = spawn(executable, ['--no-color', '--config-file', schemathesisSettings, 'run', join(projectRoot, 'openapi.yaml')], {
    cwd: projectRoot,
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  let passedOn = 0
  const passOnWholeLines = (): void => {
    const end = output.lastIndexOf('\n')
    if (end < passedOn) return
    const lines = output.slice(passedOn, end).split('\n')
    process.stderr.write(lines.map((line) => `[${label}] ${line}\n`).join(''))
    passedOn = end + 1
  }
  const keep = (text: string): void => {
    output += text
    passOnWholeLines()
  }
  // Decoded as text here, so that a character split across two reads is decoded whole.
  child.stdout.setEncoding('utf8').on('data', keep)
  child.stderr.setEncoding('utf8').on('data', keep)
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', resolve)
  })
  if (output !== '' && !output.endsWith('\n')) output += '\n'
  passOnWholeLines()
  return { code, output }
}

interface Backend {
  readonly name: string
  readonly skip: string | false
  readonly databaseUrl: (t: Test) => Promise<string>
}

const backends: Backend[] = [
  {
    name: 'SQLite',
    skip: false,
    databaseUrl: async (t) => `sqlite:${join(testFolder(t), 'plants.db')}`,
  },
  {
    name: 'PostgreSQL',
    skip: privatePostgresSkipReason,
    databaseUrl: async (t) => {
      const postgres = await privatePostgres(t)
      await postgres.start()
      const admin = new pg.Client({ connectionString: postgres.url })
      await admin.connect()
      try {
        await admin.query('CREATE SCHEMA fuzz')
      } finally {
        await admin.end()
      }
      return postgresUrlWithSchema(postgres.url, 'fuzz')
    },
  },
]

const executable = installSchemathesis()

// The backends are fuzzed at the same time: each run is mostly Schemathesis' own Python on one
// core, so two at once take about half the time of one after the other on two cores.
t.jobs = backends.length
for (const backend of backends) {
  t.test(`Schemathesis finds no disagreement between openapi.yaml and the service on ${backend.name}`, { skip: backend.skip }, async (t) => {
    const server = await startServer(t, {
      DATABASE_URL: await backend.databaseUrl(t),
      API_TOKENS: token,
      // Schemathesis sends thousands of requests from one address, many of them with missing or
      // wrong tokens on purpose; under the default limits the 31st failure would turn every later
      // plant request into a 429, and the fuzzing would test the limiter instead of the contract.
      // The limits still run; test/rate-limits.test.ts tests what they refuse.
      RATE_LIMIT_PER_CREDENTIAL: '1000000000',
      RATE_LIMIT_PER_ADDRESS: '1000000000',
      RATE_LIMIT_FAILED_AUTH: '1000000000',
      // The endpoints' URLs as openapi.yaml states them (WEBHOOK_ALLOW_LOOPBACK unset), so that every
      // URL the schema allows must be registered; and no delivery, so that none of the URLs
      // Schemathesis makes up is ever resolved or sent to: nothing leaves this machine.
      WEBHOOK_DELIVERIES: 'off',
    })
    // tap sets FORCE_COLOR=0, which Schemathesis' console library takes as a terminal to draw
    // progress bars on; without it, the output is plain lines, as in a CI log.
    const environment: NodeJS.ProcessEnv = { ...process.env, PLANT_STORE_URL: server.baseUrl, PLANT_STORE_TOKEN: token }
    delete environment.FORCE_COLOR
    const { code, output } = await runSchemathesis(await executable, environment, backend.name)
    const failures = /^=+ FAILURES =+$[\s\S]*?(?=^=+ (?:WARNINGS|SUMMARY) =+$)/m.exec(output)?.[0]
    t.equal(code, 0, 'Schemathesis exits 0', failures === undefined ? {} : { failures })
    const testCases = /^ {2}(\d+ generated.*)$/m.exec(output)?.[1]
    t.ok(testCases, 'Schemathesis reports how many cases it ran')
    t.match(output, /^=+ No issues found in [\d.]+s =+$/m, 'and no issue')
    t.comment(`${backend.name}: ${testCases ?? 'no count of test cases'}`)
    t.equal(server.child.exitCode, null, 'the service is still running')
  })
}
