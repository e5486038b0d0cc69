import t from 'tap'
import { pathTemplatePattern } from '../../src/openapi/openapi-document.js'

t.test('a path template matches its paths literally, each parameter within one segment', async (t) => {
  const plant = pathTemplatePattern('/plants/{id}')
  t.ok(plant.test('/plants/12'))
  t.ok(plant.test('/plants/'), 'an empty value, as the router matches it')
  t.notOk(plant.test('/plants/12/leaves'), 'one segment only')
  t.ok(pathTemplatePattern('/a-b/{id}').test('/a-b/7'), 'a hyphen in the path')
  t.notOk(pathTemplatePattern('/a-b/{id}').test('/aXb/7'))
  t.ok(pathTemplatePattern('/{a}{b}').test('/xy'), 'two parameters in one segment')
  t.notOk(pathTemplatePattern('/openapi.json').test('/openapiXjson'), 'a dot in a path is a dot')
  t.notOk(pathTemplatePattern('/a+b').test('/aab'))
})

t.test('under a base path, the root is matched with and without its slash', async (t) => {
  t.ok(pathTemplatePattern('/', '/api/v1').test('/api/v1'))
  t.ok(pathTemplatePattern('/', '/api/v1').test('/api/v1/'))
  t.notOk(pathTemplatePattern('/plants', '/api/v1').test('/api/v1/plants/'), 'any other path only as declared')
  t.notOk(pathTemplatePattern('/', '/api.v1').test('/apiXv1'), "the base path's dots are dots too")
})
