import t from 'tap'
import { classifyManagedToken, managedTokenPattern, mintManagedToken } from '../../src/auth/managed-token.js'
import { token68 } from '../../src/config/token68.js'

t.test('a minted token has the prefix, 38 letters and digits, and can be sent as a bearer token', async (t) => {
  const minted = new Set(Array.from({ length: 200 }, mintManagedToken))
  t.equal(minted.size, 200, 'no two alike')
  for (const token of minted) {
    t.match(token, /^ps_[0-9A-Za-z]{38}$/)
    t.ok(token68.test(token))
    t.equal(classifyManagedToken(token), 'managed')
  }
})

t.test('any one character changed, or a character dropped or added, is caught by the checksum', async (t) => {
  const token = mintManagedToken()
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
  let changed = 0
  for (let position = 3; position < token.length; position++) {
    for (const character of alphabet) {
      if (character === token[position]) continue
      const typo = token.slice(0, position) + character + token.slice(position + 1)
      if (classifyManagedToken(typo) !== 'mistyped') t.fail(`${position}: ${character} not caught`)
      changed++
    }
  }
  t.equal(changed, 38 * 61, 'every substitution tried')
  t.equal(classifyManagedToken(token.slice(0, -1)), 'mistyped', 'truncated')
  t.equal(classifyManagedToken(`${token}0`), 'mistyped', 'one character too many')
})

t.test('a token without the prefix is not a managed token at all', async (t) => {
  for (const token of ['test-token-0123456789', 'PS_' + mintManagedToken().slice(3), 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln']) {
    t.equal(classifyManagedToken(token), 'other', token)
  }
  t.ok(managedTokenPattern.test(mintManagedToken()), 'the pattern secret scanners can use matches')
})
