import t from 'tap'
import { escapeForPattern, literalPattern } from '../../src/spec/literal-pattern.js'
import { pathTemplatePattern } from '../../src/spec/openapi-document.js'

const everySpecialCharacter = 'a (b) [c] {d} $e^ *+? | \\ / - .'

t.test('a literal pattern matches its text as written, and nothing else', async (t) => {
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

t.test('a path template matches its paths literally, each parameter within one segment', async (t) => {
  const plant = pathTemplatePattern('/plants/{id}')
  t.ok(plant.test('/plants/12'))
  t.ok(plant.test('/plants/'), 'an empty value, as the router matches it')
  t.notOk(plant.test('/plants/12/leaves'), 'one segment only')
  t.notOk(pathTemplatePattern('/openapi.json').test('/openapiXjson'), 'a dot in a path is a dot')
  t.notOk(pathTemplatePattern('/a+b').test('/aab'))
  t.ok(pathTemplatePattern('/', '/api/v1').test('/api/v1'), 'under a base path, the root without its slash')
  t.ok(pathTemplatePattern('/', '/api/v1').test('/api/v1/'))
  t.notOk(pathTemplatePattern('/', '/api.v1').test('/apiXv1'), "the base path's dots are dots too")
})
