import t from 'tap'
import { escapeForPattern } from '../../src/openapi/openapi-document.js'
import { literalPattern } from '../support/literal-pattern.js'

const everySpecialCharacter = 'a (b) [c] {d} $e^ *+? | \\ / - .'

t.test('an escaped text matches as written, and nothing else', async (t) => {
  t.ok(literalPattern('listening on http://127.0.0.1:80').test('listening on http://127.0.0.1:80'))
  t.notOk(literalPattern('127.0.0.1').test('127a0b0c1'), 'a dot is a dot')
  t.ok(literalPattern(everySpecialCharacter).test(`x ${everySpecialCharacter} y`))
  t.notOk(literalPattern('a+').test('aa'), 'a plus is a plus')
  t.notOk(literalPattern('[ab]').test('a'), 'brackets are brackets')
})

t.test('an escaped text can sit inside a larger pattern, in a character class too', async (t) => {
  t.ok(new RegExp(`^${escapeForPattern(everySpecialCharacter)}$`).test(everySpecialCharacter))
  t.ok(new RegExp(`^[${escapeForPattern('-]^\\')}]+$`).test(']-^\\'))
  t.notOk(new RegExp(`^[${escapeForPattern('-]^\\')}]+$`).test('a'))
})
