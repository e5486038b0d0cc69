import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import t, { type Test } from 'tap'
import { parse as parseYaml } from 'yaml'
import { issueManagedToken } from '../../src/auth/managed-token.js'
import { openPlantStore } from '../../src/store/open-plant-store.js'
import { privatePostgres, privatePostgresSkipReason } from '../support/private-postgres.js'
import { createConsumerProject } from '../support/consumer-project.js'
import { type CommandResult, runCommand } from '../support/run-command.js'
import { startServer } from '../support/running-server.js'
import { readStoredPlants, type StoredPlantRow } from '../support/stored-plants.js'
import { postgresUrlWithSchema, readPostgresPlants } from '../support/test-databases.js'
import { testFolder } from '../support/test-folder.js'

// `npm run test:sdk`: each client `npm run sdk` generates from openapi.yaml is built with its own
// language's tools, as a consumer builds it, and a short program of that language
// (test/sdk/<language>/) sends one round trip through it to a live service, on SQLite and on
// PostgreSQL: creates, replays, a conflict, ids at the int64 limits, two pages of the list
// following its Link header, an update (and one with a stale If-Match, and one of no plant), a delete, a 403 with a token that may only read, and a webhook
// endpoint registered whose delivery the program receives and verifies (with Standard Webhooks'
// library for Python, Java and TypeScript; Go's is not on a registry these machines reach, so
// the Go program checks the HMAC itself). The program
// prints what the client gave it; this file says what that must be, and reads the database to
// check what was stored.

const projectRoot = join(import.meta.dirname, '..', '..')
const sdkFolder = join(projectRoot, 'sdk')
// What building the clients leaves: a virtualenv, classpaths, binaries. Git-ignored with sdk/.
const buildFolder = join(sdkFolder, '.build')
const token = 'sdk-round-trip-token'
// Builds fetch from the registries the first time (Maven's plugins, PyPI, npm): minutes on a
// new machine, seconds after.
const buildTimeout = 600_000

const standardWebhooksJava = 'com.standardwebhooks:standardwebhooks:1.2.0'
const largestInt64 = 2n ** 63n - 1n
const smallestInt64 = -(2n ** 63n)
const int64RangeError = { error: 40004, message: 'body.id must be an integer from -9223372036854775808 to 9223372036854775807' }

interface Sdk {
  readonly language: string
  // Whether the client's ids are exact int64s. The TypeScript client's are JavaScript numbers.
  readonly exactInt64: boolean
  // Builds the client and its consumer program; resolves to the command that runs the program.
  readonly build: () => Promise<readonly string[]>
}

async function run (what: string, file: string, args: readonly string[], options: { cwd?: string, env?: NodeJS.ProcessEnv } = {}): Promise<CommandResult> {
  const result = await runCommand(file, args, { cwd: options.cwd ?? projectRoot, env: options.env ?? process.env, timeout: buildTimeout, maxBuffer: 64 * 1024 * 1024 })
  if (result.code !== 0) {
    throw new Error(`${what} failed (exit ${String(result.code)}):\n${result.stdout}\n${result.stderr}`)
  }
  return result
}

const sdks: Sdk[] = [
  {
    language: 'Python',
    exactInt64: true,
    build: async () => {
      const venv = join(buildFolder, 'python-venv')
      rmSync(venv, { recursive: true, force: true })
      await run('creating a virtualenv', 'python3', ['-m', 'venv', venv])
      await run('pip install sdk/python', join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', join(sdkFolder, 'python'), 'standardwebhooks==1.1.0'])
      return [join(venv, 'bin', 'python'), join(projectRoot, 'test', 'sdk', 'python', 'round_trip.py')]
    },
  },
  {
    language: 'Java',
    exactInt64: true,
    build: async () => {
      const maven = ['--batch-mode', '--quiet', '-Dstyle.color=never', '-f', join(sdkFolder, 'java', 'pom.xml')]
      await run('mvn package (sdk/java)', 'mvn', [...maven, 'package', '-DskipTests', '-Dmaven.javadoc.skip=true'])
      const classpathFile = join(buildFolder, 'java-classpath.txt')
      await run('mvn dependency:build-classpath (sdk/java)', 'mvn', [...maven, 'dependency:build-classpath', '-Dmdep.includeScope=runtime', `-Dmdep.outputFile=${classpathFile}`])
      const version = String((parseYaml(readFileSync(join(projectRoot, 'openapi.yaml'), 'utf8')) as { info: { version: unknown } }).info.version)
      const jar = join(sdkFolder, 'java', 'target', `plant-store-client-${version}.jar`)
      // Standard Webhooks' Java library, from Maven Central, to verify the delivery.
      await run('mvn dependency:copy (standardwebhooks)', 'mvn', [
        '--batch-mode', '--quiet', '-Dstyle.color=never', 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy',
        `-Dartifact=${standardWebhooksJava}`, `-DoutputDirectory=${buildFolder}`,
      ])
      const classpath = [jar, join(buildFolder, 'standardwebhooks-1.2.0.jar'), readFileSync(classpathFile, 'utf8').trim()].join(':')
      // Java runs a one-file program from its source.
      return ['java', '-cp', classpath, join(projectRoot, 'test', 'sdk', 'java', 'RoundTrip.java')]
    },
  },
  {
    language: 'Go',
    exactInt64: true,
    build: async () => {
      const binary = join(buildFolder, 'go-round-trip')
      // The client needs nothing beyond Go's standard library: nothing is downloaded.
      await run('go build (test/sdk/go with sdk/go)', 'go', ['build', '-o', binary, '.'], {
        cwd: join(projectRoot, 'test', 'sdk', 'go'),
        env: { ...process.env, GOFLAGS: '-mod=mod', GOPROXY: 'off', GOWORK: 'off', GOTOOLCHAIN: 'local' },
      })
      return [binary]
    },
  },
  {
    language: 'TypeScript',
    exactInt64: false,
    build: async () => {
      const sdk = join(sdkFolder, 'typescript')
      await run('npm install (sdk/typescript)', 'npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: sdk })
      // Packed, its `prepare` script building it, and installed from the tarball by a project of
      // the consumer's own, as the typed client's package is (test/client-package.test.ts).
      const packed = await run('npm pack (sdk/typescript)', 'npm', ['pack', '--json', '--loglevel=error', '--pack-destination', buildFolder], { cwd: sdk })
      const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }]
      const consumer = join(buildFolder, 'typescript-consumer')
      rmSync(consumer, { recursive: true, force: true })
      await createConsumerProject(consumer, join(buildFolder, filename), buildTimeout)
      await run('npm install standardwebhooks (the consumer)', 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', 'standardwebhooks@1'], { cwd: consumer })
      writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: true,
          typeRoots: [join(projectRoot, 'node_modules', '@types')],
          types: ['node'],
          outDir: 'dist',
        },
        files: ['round-trip.ts'],
      }))
      copyFileSync(join(projectRoot, 'test', 'sdk', 'typescript', 'round-trip.ts'), join(consumer, 'round-trip.ts'))
      await run('tsc (the consumer)', join(projectRoot, 'node_modules', '.bin', 'tsc'), ['-p', join(consumer, 'tsconfig.json')])
      return [process.execPath, join(consumer, 'dist', 'round-trip.js')]
    },
  },
]

// What every consumer must have seen, and what the database must hold after it.
function expectedRoundTrip (exactInt64: boolean): { seen: object, stored: StoredPlantRow[] } {
  const monstera = { status: 200, plant: { name: 'Monstera', tag: 'aroid' } }
  // One plant a page: the smallest id first, then Monstera's; without exact ids, Monstera's, then
  // the rounded Aloe's, the last.
  const pages = exactInt64
    ? {
        firstPage: { status: 200, ids: [String(smallestInt64)], next: `/plants?after=${smallestInt64}&limit=1` },
        secondPage: { status: 200, ids: ['10'], next: '/plants?after=10&limit=1' },
      }
    : {
        firstPage: { status: 200, ids: ['10'], next: '/plants?after=10&limit=1' },
        secondPage: { status: 200, ids: [String(2n ** 53n)], next: null },
      }
  return {
    seen: {
      create: monstera,
      replay: monstera,
      conflict: { status: 409, error: { error: 40901, message: 'a plant with id 10 already exists with a different name or tag' } },
      missingToken: { status: 401, error: { error: 40101, message: 'bearer credentials are required' } },
      // The doubles nearest the int64 extremes are 2^63 and -2^63, which JSON.stringify writes
      // as 9223372036854776000 and -9223372036854776000: both outside int64, read exactly.
      largestId: exactInt64 ? { status: 200, plant: { name: 'Largest' } } : { status: 400, error: int64RangeError },
      smallestId: exactInt64 ? { status: 200, plant: { name: 'Smallest' } } : { status: 400, error: int64RangeError },
      beyondDoubles: { status: 200, plant: { name: 'Aloe' } },
      health: 'ok',
      ...pages,
      updated: { status: 200, plant: { name: 'Monstera', tag: 'climber' } },
      staleUpdate: { status: 412, error: { error: 41201, message: 'the plant with id 10 does not match If-Match: it changed since that entity tag was read' } },
      updateMissing: { status: 404, error: { error: 40401, message: 'no plant has id 11' } },
      deleted: 204,
      deletedAgain: { status: 404, error: { error: 40401, message: 'no plant has id 10' } },
      forbidden: { status: 403, error: { error: 40301, message: 'the token lacks a role this operation needs: plants:write' } },
      // Created, received, verified, read into the spec's NewPlantEvent model; the plant deleted again.
      webhook: { registered: 201, listed: ['enabled'], type: 'newPlant', plant: 'Webhook fern', sameAsModel: 'Webhook fern', deleted: 204 },
    },
    // Monstera deleted.
    stored: exactInt64
      ? [
          { id: smallestInt64, name: 'Smallest', tag: null },
          { id: 2n ** 53n + 1n, name: 'Aloe', tag: null },
          { id: largestInt64, name: 'Largest', tag: null },
        ]
      : [
          // Sent as 2^53 + 1, rounded by the client to the double 2^53 without a word.
          { id: 2n ** 53n, name: 'Aloe', tag: null },
        ],
  }
}

interface Backend {
  readonly name: string
  readonly skip: string | false
  // A new, empty database: the service's DATABASE_URL and a reader of what it stores.
  readonly database: (t: Test, language: string) => Promise<{ url: string, read: () => Promise<StoredPlantRow[]> }>
}

let postgresUrl: string | undefined
const backends: Backend[] = [
  {
    name: 'SQLite',
    skip: false,
    database: async (t) => {
      const file = join(testFolder(t), 'plants.db')
      return { url: `sqlite:${file}`, read: async () => readStoredPlants(file) }
    },
  },
  {
    name: 'PostgreSQL',
    skip: privatePostgresSkipReason,
    database: async (_t, language) => {
      if (postgresUrl === undefined) throw new Error('the private PostgreSQL is not running')
      const schema = `sdk_${language.toLowerCase()}`
      const admin = new pg.Client({ connectionString: postgresUrl })
      await admin.connect()
      try {
        await admin.query(`CREATE SCHEMA ${schema}`)
      } finally {
        await admin.end()
      }
      return { url: postgresUrlWithSchema(postgresUrl, schema), read: async () => readPostgresPlants(postgresUrl ?? '', `${schema}.plants`) }
    },
  },
]

// A managed token that holds plants:read alone, issued in the database before the service starts.
async function issueReadOnlyToken (databaseUrl: string): Promise<string> {
  const store = await openPlantStore({ DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: 1, DATABASE_FAILOVER_WAIT: 0 }, { warn: () => undefined })
  try {
    return (await issueManagedToken(store.apiTokens, { name: 'reader', roles: ['plants:read'] })).token
  } finally {
    await store.close()
  }
}

t.before(async () => {
  mkdirSync(buildFolder, { recursive: true })
  if (privatePostgresSkipReason !== false) return
  // One private cluster for the whole file; each run gets a schema of its own on it.
  const postgres = await privatePostgres(t)
  await postgres.start()
  postgresUrl = postgres.url
})

for (const { language, exactInt64, build } of sdks) {
  t.test(`the ${language} client`, async (t) => {
    const command = await build()
    const expected = expectedRoundTrip(exactInt64)
    for (const backend of backends) {
      await t.test(`round trip on ${backend.name}`, { skip: backend.skip }, async (t) => {
        const database = await backend.database(t, language)
        const readToken = await issueReadOnlyToken(database.url)
        const server = await startServer(t, { DATABASE_URL: database.url, API_TOKENS: token, WEBHOOK_ALLOW_LOOPBACK: 'only' })
        const [file = '', ...args] = command
        const { stdout } = await run(`the ${language} consumer`, file, args, {
          env: { ...process.env, PLANT_STORE_URL: server.baseUrl, PLANT_STORE_TOKEN: token, PLANT_STORE_READ_TOKEN: readToken },
        })
        t.strictSame(JSON.parse(stdout), expected.seen, 'what the client gave the consumer')
        t.strictSame(await database.read(), expected.stored, 'what the database holds, ids read exactly')
      })
    }
  })
}
