import { Readable } from 'node:stream'
import t from 'tap'
import { readStoredIds } from './support/stored-plants.js'
import { buildTestApp, testToken } from './support/helper.js'

// Only application/json (charset utf-8 or none) is read, and never more than BODY_LIMIT bytes.

const authorization = `Bearer ${testToken}`

// A valid NewPlant of exactly `size` bytes, padded with an undeclared property.
function newPlantOfSize (id: number, size: number): string {
  const empty = JSON.stringify({ id, name: 'Fern', padding: '' })
  if (size < empty.length) throw new Error(`a NewPlant needs at least ${empty.length} bytes`)
  const body = JSON.stringify({ id, name: 'Fern', padding: 'p'.repeat(size - empty.length) })
  if (Buffer.byteLength(body) !== size) throw new Error('the padded body has the wrong size')
  return body
}

t.test('a body of any other media type is a 415 41501 and is not stored', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  const body = JSON.stringify({ id: 1, name: 'Fern' })
  for (const contentType of [
    'text/plain',
    'text/plain; charset=utf-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'text/json',
    'application/json-patch+json',
    'application/merge-patch+json',
    'application/jsonx',
    'application/*',
    '*/*',
  ]) {
    const answer = await createPlant(body, { 'content-type': contentType })
    t.equal(answer.statusCode, 415, contentType)
    t.match(answer.body, { error: 41501, message: String }, contentType)
  }
  t.same(readStoredIds(databaseFile), [])
})

t.test('a body without a Content-Type is a 415 41501', async (t) => {
  const { send, databaseFile } = await buildTestApp(t)
  const answer = await send({
    method: 'POST',
    url: '/plants',
    headers: { authorization },
    payload: JSON.stringify({ id: 1, name: 'Fern' }),
  })
  t.equal(answer.response.raw.req.headers['content-type'], undefined, 'no Content-Type was sent')
  t.equal(answer.statusCode, 415)
  t.same(answer.body, { error: 41501, message: 'the body must be application/json (charset utf-8), not untyped' })
  t.same(readStoredIds(databaseFile), [])
})

t.test('application/json is read with charset utf-8 or none, whatever the case', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  const contentTypes = [
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'application/json; charset="utf-8"',
    'Application/JSON',
    'APPLICATION/JSON; CHARSET=UTF-8',
  ]
  for (const [index, contentType] of contentTypes.entries()) {
    const answer = await createPlant({ id: index, name: 'Fern' }, { 'content-type': contentType })
    t.equal(answer.statusCode, 200, contentType)
    t.strictSame(answer.body, { name: 'Fern' }, contentType)
  }
  t.same(readStoredIds(databaseFile), contentTypes.map((_, index) => index))
})

t.test('the schema applies to every accepted spelling of application/json', async (t) => {
  const { createPlant } = await buildTestApp(t)
  for (const contentType of ['application/json', 'Application/JSON', 'application/json;charset=UTF-8']) {
    const answer = await createPlant({ id: 1 }, { 'content-type': contentType })
    t.equal(answer.statusCode, 400, contentType)
    t.same(answer.body, { error: 40003, message: 'body.name is required' }, contentType)
  }
})

t.test('application/json in any charset but utf-8 is a 415 41501', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  for (const contentType of [
    'application/json; charset=latin1',
    'application/json; charset=iso-8859-1',
    'application/json; charset=utf-16',
    'application/json; charset=utf-16le',
    'application/json; charset=us-ascii',
  ]) {
    const answer = await createPlant({ id: 1, name: 'Fern' }, { 'content-type': contentType })
    t.equal(answer.statusCode, 415, contentType)
    t.same(answer.body, {
      error: 41501,
      message: `the body must be application/json (charset utf-8), not ${JSON.stringify(contentType)}`,
    }, contentType)
  }
  t.same(readStoredIds(databaseFile), [])
})

t.test('a body over the default limit of 16384 bytes is a 413 41301 and is not stored', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  const body = newPlantOfSize(1, 20_000)
  const answer = await createPlant(body)
  t.equal(answer.response.raw.req.headers['content-length'], '20000', 'sent with its Content-Length')
  t.equal(answer.statusCode, 413)
  t.same(answer.body, { error: 41301, message: 'the body is larger than 16384 bytes' })
  t.same(readStoredIds(databaseFile), [])
})

t.test('a chunked body over the limit, with no Content-Length, is a 413 41301 and is not stored', async (t) => {
  const { send, databaseFile } = await buildTestApp(t)
  const body = Buffer.from(newPlantOfSize(1, 20_000))
  const chunks = [body.subarray(0, 4096), body.subarray(4096, 12_288), body.subarray(12_288)]
  const answer = await send({
    method: 'POST',
    url: '/plants',
    headers: { authorization, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    payload: Readable.from(chunks),
  })
  t.equal(answer.response.raw.req.headers['content-length'], undefined, 'sent without a Content-Length')
  t.equal(answer.statusCode, 413)
  t.same(answer.body, { error: 41301, message: 'the body is larger than 16384 bytes' })
  t.same(readStoredIds(databaseFile), [])
})

t.test('a chunked body within the limit is read', async (t) => {
  const { send, databaseFile } = await buildTestApp(t)
  const body = Buffer.from(newPlantOfSize(1, 10_000))
  const answer = await send({
    method: 'POST',
    url: '/plants',
    headers: { authorization, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    payload: Readable.from([body.subarray(0, 5000), body.subarray(5000)]),
  })
  t.equal(answer.statusCode, 200)
  t.strictSame(answer.body, { name: 'Fern' })
  t.same(readStoredIds(databaseFile), [1])
})

t.test('a body at or a little under the limit is accepted, one byte more is not', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  const underLimit = await createPlant(newPlantOfSize(1, 16_384 - 100))
  t.equal(underLimit.statusCode, 200, 'limit - 100 bytes')
  const atLimit = await createPlant(newPlantOfSize(2, 16_384))
  t.equal(atLimit.statusCode, 200, 'exactly the limit')
  const overLimit = await createPlant(newPlantOfSize(3, 16_385))
  t.equal(overLimit.statusCode, 413, 'limit + 1 byte')
  t.match(overLimit.body, { error: 41301 })
  t.same(readStoredIds(databaseFile), [1, 2])
})

t.test('the limit counts bytes, not characters', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  // 6000 three-byte characters: 6000 characters of padding, over 18000 bytes.
  const body = JSON.stringify({ id: 1, name: 'Fern', padding: '\u20ac'.repeat(6000) })
  t.ok(body.length < 16_384 && Buffer.byteLength(body) > 16_384)
  const answer = await createPlant(body)
  t.equal(answer.statusCode, 413)
  t.match(answer.body, { error: 41301 })
  t.same(readStoredIds(databaseFile), [])
})

t.test('a BODY_LIMIT override is honoured', async (t) => {
  const { createPlant, send, databaseFile } = await buildTestApp(t, { BODY_LIMIT: 200 })
  const overLimit = await createPlant(newPlantOfSize(1, 201))
  t.equal(overLimit.statusCode, 413)
  t.same(overLimit.body, { error: 41301, message: 'the body is larger than 200 bytes' })

  const streamed = await send({
    method: 'POST',
    url: '/plants',
    headers: { authorization, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    payload: Readable.from([Buffer.from(newPlantOfSize(2, 300))]),
  })
  t.equal(streamed.statusCode, 413, 'chunked')
  t.match(streamed.body, { error: 41301 })

  const atLimit = await createPlant(newPlantOfSize(3, 200))
  t.equal(atLimit.statusCode, 200)
  t.same(readStoredIds(databaseFile), [3])
})

t.test('after a 413 nothing is stored, so the id stays free', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t, { BODY_LIMIT: 200 })
  const tooLarge = JSON.stringify({ id: 5, name: 'x'.repeat(300) })
  t.equal((await createPlant(tooLarge)).statusCode, 413)
  t.same(readStoredIds(databaseFile), [])
  const created = await createPlant({ id: 5, name: 'Fern' })
  t.equal(created.statusCode, 200, 'the same id with another name is no conflict')
  t.strictSame(created.body, { name: 'Fern' })
  t.same(readStoredIds(databaseFile), [5])
})

t.test('a POST with no body and no Content-Type is a 400 40003: the body is required', async (t) => {
  const { send } = await buildTestApp(t)
  for (const headers of [{}, { 'content-length': '0' }]) {
    const answer = await send({ method: 'POST', url: '/plants', headers: { authorization: `Bearer ${testToken}`, ...headers } })
    t.equal(answer.statusCode, 400)
    t.same(answer.body, { error: 40003, message: 'the request body is required' })
  }
})

t.test('every charset parameter must be utf-8', async (t) => {
  const { createPlant } = await buildTestApp(t)
  const answer = await createPlant({ id: 1, name: 'Fern' }, { 'content-type': 'application/json; charset=utf-8; charset=latin1' })
  t.equal(answer.statusCode, 415)
  t.equal((answer.body as { error: number }).error, 41501)
})

t.test('an encoded body is a 415 41501; identity is no encoding', async (t) => {
  const { createPlant } = await buildTestApp(t)
  for (const encoding of ['gzip', 'br', 'deflate', 'gzip, identity']) {
    const answer = await createPlant({ id: 1, name: 'Fern' }, { 'content-encoding': encoding })
    t.equal(answer.statusCode, 415, encoding)
    t.equal((answer.body as { error: number }).error, 41501, encoding)
  }
  t.equal((await createPlant({ id: 1, name: 'Fern' }, { 'content-encoding': 'identity' })).statusCode, 200)
})
