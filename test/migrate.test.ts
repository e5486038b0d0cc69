import { join } from 'node:path'
import t from 'tap'
import { postgresSkipReason, postgresTestDatabase, runAsAdmin } from './support/test-databases.js'
import { type CommandResult, runCommand } from './support/run-command.js'
import { readStoredPlants } from './support/stored-plants.js'
import { migrations } from '../src/store/migrations.js'
import { testFolder } from './support/test-folder.js'

// `npm run migrate` is `node scripts/build.mjs --quiet && node dist/src/migrate.js`; `npm test` has built it.
const migrateScript = join(import.meta.dirname, '..', 'dist', 'src', 'migrate.js')

async function migrate (databaseUrl: string): Promise<CommandResult> {
  return runCommand(process.execPath, [migrateScript], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl }, timeout: 20_000,
  })
}

t.test('migrate applies the PostgreSQL migrations without starting a server, and is safe to run again', { skip: postgresSkipReason }, async (t) => {
  const database = await postgresTestDatabase(t)
  for (const attempt of ['first', 'second']) {
    const result = await migrate(database.url)
    t.same(result, { code: 0, stdout: 'migrations are applied; the store is ready\n', stderr: '' }, attempt)
  }
  t.same(await runAsAdmin(`SELECT version FROM ${database.schema}.schema_migrations ORDER BY version`), migrations.map(({ version }) => ({ version })))
  t.same(await database.readStoredPlants(), [], 'the plants table exists, empty')
})

t.test('migrate creates and migrates a SQLite file', async (t) => {
  const file = `${testFolder(t)}/data/plants.db`
  t.equal((await migrate(`sqlite:${file}`)).code, 0)
  t.same(readStoredPlants(file), [])
})

t.test('migrate exits 1 and says why when the database cannot be reached', async (t) => {
  const result = await migrate('postgres://postgres@127.0.0.1:1/test')
  t.equal(result.code, 1)
  t.match(result.stderr, /^migration failed: the store is unavailable; retry later: connect ECONNREFUSED 127\.0\.0\.1:1\n$/)
})

t.test('migrate exits 1 on a bad DATABASE_URL, naming the variable', async (t) => {
  const result = await migrate('mysql://plants:hunter2@db/plants')
  t.equal(result.code, 1)
  t.match(result.stderr, /DATABASE_URL="mysql:\/\/plants:\*\*\*@db\/plants" is not valid/)
})
