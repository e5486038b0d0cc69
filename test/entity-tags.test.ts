import t from 'tap'
import { entityTagOf, ifMatchCondition } from '../src/http/entity-tags.js'
import { buildTestApp, testToken } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'

// Every Plant answer carries the plant's ETag (RFC 9110 §8.8.3), and a write sent with If-Match
// goes on only while the plant still has one of the tags it lists (§13.1.1): otherwise 412, and
// nothing changes. A plant that is not stored is a 404 whatever If-Match says (§13.2.2).

const asCaller = { authorization: `Bearer ${testToken}` }

t.test('a tag is strong, the same for the same document and another for another', async (t) => {
  const fern = entityTagOf('{"name":"Fern"}')
  t.match(fern, /^"[A-Za-z0-9_-]{24}"$/, 'a quoted opaque tag')
  t.equal(entityTagOf('{"name":"Fern"}'), fern, 'the same document, the same tag')
  t.not(entityTagOf('{"name":"Fern","tag":"shade"}'), fern, 'another document, another tag')
})

t.test('If-Match, read as RFC 9110 compares it', async (t) => {
  const stored = '{"name":"Fern"}'
  const tag = entityTagOf(stored)
  const other = entityTagOf('{"name":"Ivy"}')
  t.equal(ifMatchCondition(undefined), undefined, 'no header asks nothing')
  t.equal(ifMatchCondition('*'), undefined, '* asks only that the plant is stored')
  const cases: Array<[string, boolean]> = [
    [tag, true], [other, false], [`${other}, ${tag}`, true], [`${other},${tag}`, true],
    [`W/${tag}`, false], [`W/${other}, ${tag}`, true], ['"a,b", ' + tag, true], ['""', false],
  ]
  for (const [header, meets] of cases) t.equal(ifMatchCondition(header)?.(stored), meets, `${header}: ${meets ? 'met' : 'not met'}`)
})

testOnEveryBackend(t, 'a create and a read answer the tag; a delete with a stale tag is a 412 that deletes nothing', async (t, database) => {
  const { createPlant, send } = await buildTestApp(t, { DATABASE_URL: database.url })
  const created = await createPlant('{"id":9007199254740993,"name":"Aloe","tag":"succulent"}')
  const tag = created.headers.etag as string
  t.equal(tag, entityTagOf('{"name":"Aloe","tag":"succulent"}'), 'the tag of the stored document')
  const replay = await createPlant('{"id":9007199254740993,"name":"Aloe","tag":"succulent"}')
  t.equal(replay.headers.etag, tag, 'a replay answers the same tag')
  const read = await send({ method: 'GET', url: '/plants/9007199254740993', headers: asCaller })
  t.equal(read.headers.etag, tag, 'a read answers the same tag, on either backend')

  const stale = entityTagOf('{"name":"Aloe"}')
  const refused = await send({ method: 'DELETE', url: '/plants/9007199254740993', headers: { ...asCaller, 'if-match': stale } })
  t.same([refused.statusCode, refused.body], [412, {
    error: 41201, message: 'the plant with id 9007199254740993 does not match If-Match: it changed since that entity tag was read',
  }])
  const weak = await send({ method: 'DELETE', url: '/plants/9007199254740993', headers: { ...asCaller, 'if-match': `W/${tag}` } })
  t.equal(weak.statusCode, 412, 'a weak tag never matches strongly')
  t.same((await database.readStoredPlants()).map(({ id }) => id), [9007199254740993n], 'nothing was deleted')

  const deleted = await send({ method: 'DELETE', url: '/plants/9007199254740993', headers: { ...asCaller, 'if-match': `${stale}, ${tag}` } })
  t.equal(deleted.statusCode, 204, 'a list that holds the current tag lets the delete go on')
  const gone = await send({ method: 'DELETE', url: '/plants/9007199254740993', headers: { ...asCaller, 'if-match': tag } })
  t.same([gone.statusCode, (gone.body as { error: number }).error], [404, 40401], 'a plant not stored is a 404, whatever If-Match says')
  const anyGone = await send({ method: 'DELETE', url: '/plants/9007199254740993', headers: { ...asCaller, 'if-match': '*' } })
  t.equal(anyGone.statusCode, 404, 'and so with *')
})

t.test('an If-Match that is not a list of entity tags matches no plant: a 412 saying so, and nothing is deleted', async (t) => {
  const { createPlant, send } = await buildTestApp(t)
  await createPlant({ id: 1, name: 'Fern' })
  for (const header of ['abc', '0', '"unclosed', '*, "a"', 'W/abc', '']) {
    const answer = await send({ method: 'DELETE', url: '/plants/1', headers: { ...asCaller, 'if-match': header } })
    t.same(answer.statusCode, 412, `If-Match: ${header}`)
    t.same(answer.body, {
      error: 41201, message: 'the plant with id 1 does not match If-Match: it names no entity tag (a tag is quoted, as ETag sends it)'
    }, 'the message says why no tag matched')
    const update = await send({ method: 'PUT', url: '/plants/1', headers: { ...asCaller, 'if-match': header }, payload: { name: 'Palm' } })
    t.same([update.statusCode, (update.body as { error: number }).error], [412, 41201], `PUT with If-Match: ${header}`)
  }
  const stored = await send({ method: 'GET', url: '/plants/1', headers: asCaller })
  t.same([stored.statusCode, stored.body], [200, { name: 'Fern' }], 'the plant is still there, unchanged')
})
