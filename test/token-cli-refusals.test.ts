import { existsSync } from 'node:fs'
import t from 'tap'
import { freePort } from './support/free-port.js'
import { token } from './support/token-cli.js'
import { testFolder } from './support/test-folder.js'

// What `npm run token` refuses, and how: a command line it does not take exits 2 before the store
// is opened; a store it cannot use exits 1; neither prints a stack trace.

t.test('an expiry in the past or not in a known form is a usage error (exit 2), and nothing is stored', async (t) => {
  const databaseUrl = `sqlite:${testFolder(t)}/plants.db`
  const refusals: Array<[string, RegExp]> = [
    ['2020-01-01', /^--expires 2020-01-01 is not in the future: it is 2020-01-01T00:00:00\.000Z, and now is \S+Z\n\nusage: /],
    ['0d', /^--expires 0d is not in the future/],
    ['soon', /^--expires "soon" is not one of 30m, 12h or 30d/],
    ['2027-02-30', /^--expires "2027-02-30" is not one of/],
    ['2027-01-31T18:00', /^--expires "2027-01-31T18:00" is not one of/],
  ]
  for (const [expires, message] of refusals) {
    const result = await token(databaseUrl, 'create', '--name', 'ci', '--expires', expires)
    t.equal(result.code, 2, expires)
    t.equal(result.stdout, '')
    t.match(result.stderr, message)
  }
  t.notOk(existsSync(databaseUrl.slice('sqlite:'.length)), 'the store was not even opened')
})
t.test('an unreachable PostgreSQL: every command exits 1 with one line naming DATABASE_URL, its password masked', async (t) => {
  const databaseUrl = `postgres://postgres:hunter2@127.0.0.1:${await freePort()}/test`
  for (const args of [['create', '--name', 'ci'], ['list'], ['revoke', 'ci']]) {
    const result = await token(databaseUrl, ...args)
    t.equal(result.code, 1, args.join(' '))
    t.equal(result.stdout, '')
    t.match(result.stderr,
      /^the store at DATABASE_URL="postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/test" is unavailable: connect ECONNREFUSED 127\.0\.0\.1:\d+; try again once it answers\n$/)
  }
})

t.test('a bad DATABASE_URL exits 1 with the configuration\'s message, its password masked', async (t) => {
  const result = await token('mysql://plants:hunter2@db/plants', 'list')
  t.equal(result.code, 1)
  t.match(result.stderr, /^invalid configuration:\n {2}DATABASE_URL="mysql:\/\/plants:\*\*\*@db\/plants" is not valid/)
  t.notMatch(result.stderr, /hunter2|\n {4}at /)
})

t.test('help is the usage on stdout; no command, an unknown one or a bad option is the usage on stderr, exit 2', async (t) => {
  const databaseUrl = `sqlite:${testFolder(t)}/plants.db`
  const help = await token(databaseUrl, 'help')
  t.equal(help.code, 0)
  t.match(help.stdout, /^usage: npm run token -- <command>\n/)
  t.match(help.stdout, /create --name NAME \[--expires WHEN\][^]*list \[--json\][^]*revoke NAME/)
  t.equal(help.stderr, '')

  const misuses: Array<[string[], string]> = [
    [[], 'no command given'],
    [['frob'], 'unknown command "frob"'],
    [['create', '--name', 'ci', '--bogus'], "create: Unknown option '--bogus'"],
    [['create', '--name', 'no spaces'], '--name "no spaces" is not a token name'],
    [['create'], 'create needs --name NAME'],
    [['revoke'], 'revoke takes one NAME, not 0'],
  ]
  for (const [args, message] of misuses) {
    const result = await token(databaseUrl, ...args)
    t.equal(result.code, 2, args.join(' ') || '(nothing)')
    t.equal(result.stdout, '')
    t.ok(result.stderr.startsWith(message), result.stderr.split('\n')[0] ?? '')
    t.ok(result.stderr.endsWith(help.stdout), 'then the usage')
  }
  t.notOk(existsSync(databaseUrl.slice('sqlite:'.length)), 'the store was never opened')
})
