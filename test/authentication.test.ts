import t, { type Test } from 'tap'
import { loadOpenApiDocument } from '../src/openapi/openapi-document.js'
import { readStoredIds } from './support/stored-plants.js'
import { buildTestApp, type CheckedResponse, otherTestToken, testToken } from './support/helper.js'

// RFC 6750 behaviour of the bearerAuth scheme of openapi.yaml, seen through POST /plants.

const challenge = 'Bearer realm="plant-store"'
const invalidTokenChallenge = `${challenge}, error="invalid_token"`
const invalidRequestChallenge = `${challenge}, error="invalid_request"`

const plant = { id: 1, name: 'Monstera', tag: 'aroid' }

// POST /plants with a valid body and exactly the given Authorization header, or none.
function postPlant (authorization: string | undefined): { method: 'POST', url: string, headers: Record<string, string>, payload: string } {
  return {
    method: 'POST',
    url: '/plants',
    headers: {
      'content-type': 'application/json',
      ...(authorization === undefined ? {} : { authorization }),
    },
    payload: JSON.stringify(plant),
  }
}

function expectFailure (
  t: Test,
  answer: CheckedResponse,
  statusCode: number,
  code: number,
  wwwAuthenticate: string,
  label: string
): void {
  t.equal(answer.statusCode, statusCode, `${label}: status`)
  t.match(answer.body, { error: code, message: String }, `${label}: error code`)
  t.equal(answer.headers['www-authenticate'], wwwAuthenticate, `${label}: WWW-Authenticate`)
}

t.test('a request without an Authorization header is a 401 40101 with the bare Bearer challenge', async (t) => {
  const { send, databaseFile } = await buildTestApp(t)
  const answer = await send(postPlant(undefined))
  expectFailure(t, answer, 401, 40101, challenge, 'no Authorization')
  t.same(answer.body, { error: 40101, message: 'bearer credentials are required' })
  t.same(readStoredIds(databaseFile), [], 'nothing is stored')
})

t.test('credentials of another scheme are no bearer credentials: 401 40101', async (t) => {
  const { send } = await buildTestApp(t)
  for (const authorization of ['Basic dXNlcjpwYXNz', `Token ${testToken}`, `Bearer${testToken}`, '']) {
    expectFailure(t, await send(postPlant(authorization)), 401, 40101, challenge, JSON.stringify(authorization))
  }
})

t.test('an unknown token is a 401 40102 with error="invalid_token"', async (t) => {
  const { send, databaseFile } = await buildTestApp(t)
  const answer = await send(postPlant('Bearer not-a-configured-token'))
  expectFailure(t, answer, 401, 40102, invalidTokenChallenge, 'unknown token')
  t.same(answer.body, { error: 40102, message: 'the bearer token is not valid' })
  t.same(readStoredIds(databaseFile), [], 'nothing is stored')
})

t.test('a malformed Bearer header is a 400 40006 with error="invalid_request"', async (t) => {
  const { send, databaseFile } = await buildTestApp(t)
  for (const authorization of [
    'Bearer',
    'Bearer ',
    'Bearer     ',
    'Bearer a b',
    `Bearer ${testToken} ${testToken}`,
    'Bearer tok@n',
    'Bearer tok"en',
    'Bearer tok,en',
    'Bearer =token',
    `Bearer ${testToken}=x`,
  ]) {
    expectFailure(t, await send(postPlant(authorization)), 400, 40006, invalidRequestChallenge, JSON.stringify(authorization))
  }
  t.same(readStoredIds(databaseFile), [], 'nothing is stored')
})

t.test('the scheme name is case-insensitive', async (t) => {
  const { send } = await buildTestApp(t)
  for (const [index, scheme] of ['Bearer', 'bearer', 'BEARER', 'bEaReR'].entries()) {
    const answer = await send({ ...postPlant(`${scheme} ${testToken}`), payload: JSON.stringify({ id: index, name: 'Fern' }) })
    t.equal(answer.statusCode, 200, scheme)
    t.same(answer.body, { name: 'Fern' }, scheme)
  }
})

t.test('every configured token is accepted', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  t.equal((await createPlant({ id: 1, name: 'Fern' }, { authorization: `Bearer ${testToken}` })).statusCode, 200)
  t.equal((await createPlant({ id: 2, name: 'Ivy' }, { authorization: `Bearer ${otherTestToken}` })).statusCode, 200)
  t.same(readStoredIds(databaseFile), [1, 2])
})

t.test('a token that is a prefix of a valid token, or a valid token plus one character, is unknown', async (t) => {
  const { send } = await buildTestApp(t)
  for (const token of [
    testToken.slice(0, -1),
    testToken.slice(0, 1),
    `${testToken}0`,
    `0${testToken}`,
    testToken.toUpperCase(),
    `${testToken},${otherTestToken}`.replace(',', ''),
  ]) {
    expectFailure(t, await send(postPlant(`Bearer ${token}`)), 401, 40102, invalidTokenChallenge, token)
  }
})

t.test('a token sent only in the query string is ignored', async (t) => {
  const { send, databaseFile } = await buildTestApp(t)
  const answer = await send({ ...postPlant(undefined), url: `/plants?access_token=${testToken}` })
  expectFailure(t, answer, 401, 40101, challenge, 'access_token query parameter')
  t.same(readStoredIds(databaseFile), [], 'nothing is stored')
})

t.test('a token sent only in the body is ignored', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ ...postPlant(undefined), payload: JSON.stringify({ ...plant, access_token: testToken }) })
  expectFailure(t, answer, 401, 40101, challenge, 'access_token body property')
})

t.test('credentials are checked before the body is parsed or validated', async (t) => {
  t.test('malformed JSON without credentials is a 401, not a 400', async (t) => {
    const { send } = await buildTestApp(t)
    const answer = await send({ ...postPlant(undefined), payload: '{"id": 1, "name": ' })
    expectFailure(t, answer, 401, 40101, challenge, 'malformed JSON')
  })

  t.test('a body that breaks the schema without credentials is a 401, not a 400', async (t) => {
    const { send } = await buildTestApp(t)
    const answer = await send({ ...postPlant(undefined), payload: '{"name": 7}' })
    expectFailure(t, answer, 401, 40101, challenge, 'schema violation')
  })

  t.test('a text/plain body without credentials is a 401, not a 415', async (t) => {
    const { send } = await buildTestApp(t)
    const answer = await send({ ...postPlant(undefined), headers: { 'content-type': 'text/plain' }, payload: 'hello' })
    expectFailure(t, answer, 401, 40101, challenge, 'text/plain')
  })

  t.test('an over-limit body without credentials is a 401, not a 413', async (t) => {
    const { send } = await buildTestApp(t, { BODY_LIMIT: 64 })
    const payload = JSON.stringify({ id: 1, name: 'x'.repeat(1000) })
    t.ok(payload.length > 1000)
    const answer = await send({ ...postPlant(undefined), payload })
    expectFailure(t, answer, 401, 40101, challenge, 'over-limit body')
  })

  t.test('an unknown token with a malformed body is a 401 40102, not a 400', async (t) => {
    const { send } = await buildTestApp(t)
    const answer = await send({ ...postPlant('Bearer unknown-token'), payload: 'not json' })
    expectFailure(t, answer, 401, 40102, invalidTokenChallenge, 'unknown token, malformed body')
  })

  t.test('a malformed Authorization header with an unsupported body is a 400 40006, not a 415', async (t) => {
    const { send } = await buildTestApp(t)
    const answer = await send({
      ...postPlant(undefined),
      headers: { authorization: 'Bearer', 'content-type': 'text/plain' },
      payload: 'hello',
    })
    expectFailure(t, answer, 400, 40006, invalidRequestChallenge, 'malformed header, text/plain body')
  })
})

t.test('security: [] in the spec makes an operation public with no code change', async (t) => {
  const { document, yamlText } = loadOpenApiDocument()
  const modified = structuredClone(document)
  const post = (modified.paths['/plants'] as Record<string, Record<string, unknown>> | undefined)?.post
  if (post === undefined) throw new Error('openapi.yaml has no POST /plants')
  post.security = []

  const { send, databaseFile } = await buildTestApp(t, {}, { openApi: { document: modified, yamlText } })
  const answer = await send(postPlant(undefined))
  t.equal(answer.statusCode, 200)
  t.same(answer.body, { name: 'Monstera', tag: 'aroid' })
  t.equal(answer.headers['www-authenticate'], undefined, 'no challenge')
  t.same(readStoredIds(databaseFile), [1])
  t.same(document.paths['/plants']?.post?.security, [{ bearerAuth: ['plants:write'] }], 'the loaded document itself is unchanged')
})

t.test('the operation stays protected when the spec is loaded unchanged', async (t) => {
  const { send } = await buildTestApp(t, {}, { openApi: loadOpenApiDocument() })
  expectFailure(t, await send(postPlant(undefined)), 401, 40101, challenge, 'unchanged spec')
})
