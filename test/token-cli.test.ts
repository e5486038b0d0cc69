import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import t from 'tap'
import { classifyManagedToken } from '../src/auth/managed-token.js'
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-plant-store.js'
import { type TestDatabase, runAsAdmin, testOnEveryBackend } from './support/test-databases.js'
import { listed, token } from './support/token-cli.js'
import { testFolder } from './support/test-folder.js'

// What `npm run token -- create|list|revoke` do to a store; test/token-cli-refusals.test.ts has
// the command lines and stores it refuses.

// Every command starts a Node process of its own: the file took 87 s of the suite's 120 s per
// file in a slow phase of a shared two-core machine. A machine twice as slow must not time it out.
t.setTimeout(240_000)

// Everything the database holds of its tokens, as bytes: every file of the SQLite database (its
// WAL included), or every row of the PostgreSQL table as text.
async function storedBytes (database: TestDatabase): Promise<Buffer> {
  if (database.backend === 'SQLite') {
    const file = database.url.slice('sqlite:'.length)
    const files = readdirSync(dirname(file)).filter((name) => name.startsWith(basename(file)))
    return Buffer.concat(files.map((name) => readFileSync(join(dirname(file), name))))
  }
  const schema = new URL(database.url).searchParams.get('options')?.replace('-c search_path=', '')
  const rows = await runAsAdmin<{ row: string }>(`SELECT api_tokens::text AS row FROM ${schema}.api_tokens`)
  return Buffer.from(rows.map(({ row }) => row).join('\n'))
}

const minute = 60_000
const day = 24 * 60 * minute

testOnEveryBackend(t, 'create prints a new token once on stdout, and the store keeps only its digest', async (t, database) => {
  const created = await token(database.url, 'create', '--name', 'ci')
  t.equal(created.code, 0)
  t.match(created.stdout, /^ps_[0-9A-Za-z]{38}\n$/, 'the token, alone on its line')
  const printed = created.stdout.trim()
  t.equal(classifyManagedToken(printed), 'managed', 'its checksum holds')
  t.equal(created.stderr, [
    'created token ci, which never expires and holds every role',
    'store it now: it is not shown again',
    'use it in the header: Authorization: Bearer <token>',
    '',
  ].join('\n'), 'the note for a person is on stderr, without the token')

  const stored = await storedBytes(database)
  t.notOk(stored.includes(printed), 'the token is nowhere in the database')
  const digest = createHash('sha256').update(printed).digest()
  t.ok(stored.includes(digest) || stored.includes(digest.toString('hex')), 'its SHA-256 digest is')

  const list = await token(database.url, 'list')
  t.equal(list.code, 0)
  t.match(list.stdout, /^NAME {2}CREATED {19}EXPIRES {2}LAST USED {2}STATUS {2}ROLES\nci {4}\S+Z {2}never {4}never {6}active {2}every role\n$/)
  t.notMatch(list.stdout, /ps_/, 'no token in the list')
  const [entry, ...others] = await listed(database.url)
  t.same(others, [])
  t.same(entry && { ...entry, createdAt: undefined },
    { name: 'ci', createdAt: undefined, expiresAt: null, lastUsedAt: null, revokedAt: null, status: 'active', roles: 'every role' })
  t.ok(Math.abs(Date.parse(entry?.createdAt ?? '') - Date.now()) < minute, 'created now')
})

testOnEveryBackend(t, '--roles gives a token the roles it names, which list shows; a role no operation names is refused', async (t, database) => {
  const created = await token(database.url, 'create', '--name', 'reader', '--roles', 'plants:read')
  t.equal(created.code, 0)
  t.match(created.stderr, /^created token reader, which never expires and holds the role plants:read\n/)
  const both = await token(database.url, 'create', '--name', 'both', '--roles', 'plants:read,plants:write')
  t.match(both.stderr, /and holds the roles plants:read, plants:write\n/)
  t.match(await listed(database.url), [{ name: 'reader', roles: ['plants:read'] }, { name: 'both', roles: ['plants:read', 'plants:write'] }])
  t.match((await token(database.url, 'list')).stdout, /\nreader .* active {2}plants:read\nboth .* active {2}plants:read,plants:write\n$/)

  const unknown = await token(database.url, 'create', '--name', 'admin', '--roles', 'plants:read,plants:admin')
  t.equal(unknown.code, 2, 'a command line the tool does not take')
  t.match(unknown.stderr, /^--roles: plants:admin is named by no operation of openapi.yaml, whose roles are plants:read, plants:write, webhooks:manage\n/)
  t.equal((await listed(database.url)).length, 2, 'and nothing was stored')
})

testOnEveryBackend(t, '--expires 30d expires 30 days from now', async (t, database) => {
  const created = await token(database.url, 'create', '--name', 'deploy', '--expires', '30d')
  t.equal(created.code, 0)
  const [entry] = await listed(database.url)
  const expiresAt = Date.parse(entry?.expiresAt ?? '')
  t.ok(Math.abs(expiresAt - (Date.now() + 30 * day)) < minute, `expires at ${entry?.expiresAt}`)
  t.equal(entry?.status, 'active')
  t.match(created.stderr, new RegExp(`^created token deploy, which expires at ${entry?.expiresAt} and holds every role\n`))
})

testOnEveryBackend(t, 'a name held by a token not revoked is refused; revoked, the token is listed so and its name is free', async (t, database) => {
  const first = (await token(database.url, 'create', '--name', 'ci')).stdout
  const taken = await token(database.url, 'create', '--name', 'ci')
  t.same(taken, {
    code: 1,
    stdout: '',
    stderr: 'a token named ci exists and is not revoked (it may have expired): revoke it first (npm run token -- revoke ci) or pick another name\n',
  })

  t.same(await token(database.url, 'revoke', 'ci'), { code: 0, stdout: 'revoked token ci\n', stderr: '' })
  t.match(await listed(database.url), [{ name: 'ci', status: 'revoked', revokedAt: String }])
  t.match((await token(database.url, 'list')).stdout, /\nci .* revoked {2}every role\n$/)

  const second = await token(database.url, 'create', '--name', 'ci')
  t.equal(second.code, 0, 'the name can be given again')
  t.not(second.stdout, first)
  t.match(await listed(database.url), [{ name: 'ci', status: 'revoked' }, { name: 'ci', status: 'active' }], 'oldest first')
})

testOnEveryBackend(t, 'revoking a name no token not revoked has exits 1 and says so', async (t, database) => {
  await token(database.url, 'create', '--name', 'ci')
  await token(database.url, 'revoke', 'ci')
  for (const name of ['nobody', 'ci']) {
    t.same(await token(database.url, 'revoke', name), {
      code: 1,
      stdout: '',
      stderr: `no token named "${name}" is left to revoke: there is none, or it is revoked already (npm run token -- list)\n`,
    }, name)
  }
})
t.test('list shows an expired token as expired; an empty store says how to create one', async (t) => {
  const file = `${testFolder(t)}/plants.db`
  const empty = await token(`sqlite:${file}`, 'list')
  t.same(empty, { code: 0, stdout: 'there are no tokens; create one with: npm run token -- create --name NAME [--expires 30d]\n', stderr: '' })
  t.same(await listed(`sqlite:${file}`), [], 'as JSON, an empty array')

  const store = await SqlitePlantStore.open({ filename: file })
  const digest = createHash('sha256').update('ps_made_up_here').digest()
  await store.apiTokens.create({ name: 'old', digest, createdAt: new Date(Date.now() - 2 * day), expiresAt: new Date(Date.now() - day) })
  await store.apiTokens.recordUse(digest, new Date(Date.now() - 1.5 * day))
  await store.close()
  t.match(await listed(`sqlite:${file}`), [{ name: 'old', status: 'expired', lastUsedAt: String }])
  t.match((await token(`sqlite:${file}`, 'list')).stdout, /\nold {3}\S+Z {2}\S+Z {2}\S+Z {2}expired {2}every role\n$/)
})
