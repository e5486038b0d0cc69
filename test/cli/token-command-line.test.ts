import t from 'tap'
import { parseTokenCommandLine } from '../../src/cli/token-command-line.js'

const now = new Date('2026-03-04T05:06:07.089Z')
const parse = (...args: string[]): ReturnType<typeof parseTokenCommandLine> => parseTokenCommandLine(args, now)

t.test('create takes a name and an optional expiry, created now', async (t) => {
  t.same(parse('create', '--name', 'ci'), { kind: 'create', name: 'ci', createdAt: now, expiresAt: null, roles: null })
  t.same(parse('create', '--name=ci', '--expires=1d'), { kind: 'create', name: 'ci', createdAt: now, expiresAt: new Date('2026-03-05T05:06:07.089Z'), roles: null })
  t.same(parse('create', '--expires', '2027-01-31', '--name', 'deploy.prod_2-a'),
    { kind: 'create', name: 'deploy.prod_2-a', createdAt: now, expiresAt: new Date('2027-01-31T00:00:00.000Z'), roles: null })
  t.same(parse('create', '--name', 'x'.repeat(64)), { kind: 'create', name: 'x'.repeat(64), createdAt: now, expiresAt: null, roles: null }, '64 characters')
})

t.test('--roles names the roles a token holds, each one an operation of the spec names', async (t) => {
  const roles = ['plants:read', 'plants:write']
  t.match(parseTokenCommandLine(['create', '--name', 'r', '--roles', 'plants:read'], now, roles), { roles: ['plants:read'] })
  t.match(parseTokenCommandLine(['create', '--name', 'rw', '--roles', ' plants:write , plants:read,plants:read'], now, roles),
    { roles: ['plants:write', 'plants:read'] }, 'spaces around commas, and a role twice')
  t.throws(() => parseTokenCommandLine(['create', '--name', 'x', '--roles', 'plants:admin'], now, roles),
    { name: 'UsageError', message: '--roles: plants:admin is named by no operation of openapi.yaml, whose roles are plants:read, plants:write' })
  t.throws(() => parseTokenCommandLine(['create', '--name', 'x', '--roles', ','], now, roles),
    { name: 'UsageError', message: '--roles needs at least one role (leave it out for every role)' })
})

t.test('a name is 1 to 64 of A-Z a-z 0-9 . _ - starting with a letter or digit', async (t) => {
  for (const name of ['', 'x'.repeat(65), '.ci', '-ci', '_ci', 'c i', 'ci/prod', 'ci:prod', 'café', 'ci\n', '"ci"']) {
    t.throws(() => parse('create', `--name=${name}`), { name: 'UsageError', message: /is not a token name/ }, JSON.stringify(name))
  }
})

t.test('list takes --json; revoke takes one name, as it was given', async (t) => {
  t.same(parse('list'), { kind: 'list', json: false })
  t.same(parse('list', '--json'), { kind: 'list', json: true })
  t.same(parse('revoke', 'ci'), { kind: 'revoke', name: 'ci' })
  t.same(parse('revoke', 'no such name'), { kind: 'revoke', name: 'no such name' }, 'a name no token can have is the store\'s to deny')
})

t.test('help, --help and -h ask for the usage, alone or after a command', async (t) => {
  for (const args of [['help'], ['--help'], ['-h'], ['create', '--help'], ['list', '-h'], ['revoke', '--help']]) {
    t.same(parse(...args), { kind: 'help' }, args.join(' '))
  }
})

t.test('any other command line is a UsageError that says what is wrong', async (t) => {
  const refusals: Array<[string[], RegExp]> = [
    [[], /^no command given$/],
    [['frob'], /^unknown command "frob"$/],
    [['--name', 'ci'], /^unknown command "--name"$/],
    [['create'], /^create needs --name NAME$/],
    [['create', '--name'], /^create: Option '--name <value>' argument missing/],
    [['create', '--name', 'ci', '--bogus'], /^create: Unknown option '--bogus'/],
    [['create', '--name', 'ci', '--json'], /^create: Unknown option '--json'/],
    [['create', '--name', 'ci', 'extra'], /^create takes options only, not "extra"$/],
    [['create', '--name', 'ci', '--expires', 'soon'], /^--expires "soon" is not one of/],
    [['create', '--name', 'ci', '--expires', '2020-01-01'], /^--expires 2020-01-01 is not in the future/],
    [['list', 'ci'], /^list takes --json only, not "ci"$/],
    [['list', '--name', 'ci'], /^list: Unknown option '--name'/],
    [['revoke'], /^revoke takes one NAME, not 0$/],
    [['revoke', 'a', 'b'], /^revoke takes one NAME, not 2$/],
    [['revoke', '--name', 'ci'], /^revoke: Unknown option '--name'/],
  ]
  for (const [args, message] of refusals) {
    t.throws(() => parse(...args), { name: 'UsageError', message }, args.join(' ') || '(nothing)')
  }
})
