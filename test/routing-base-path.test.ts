import t from 'tap'
import { buildTestApp, testToken } from './support/helper.js'

// BASE_PATH moves every route, the API's and the operational ones, under one prefix.

const authorization = `Bearer ${testToken}`

t.test('BASE_PATH prefixes every route', async (t) => {
  const { app, send, createPlant } = await buildTestApp(t, { BASE_PATH: '/api/v1' })

  const created = await createPlant({ id: 1, name: 'Fern' })
  t.equal(created.response.raw.req.url, '/api/v1/plants', 'createPlant sent to the prefixed path')
  t.equal(created.statusCode, 200)
  t.strictSame(created.body, { name: 'Fern' })

  const unprefixed = await app.inject({
    method: 'POST',
    url: '/plants',
    headers: { authorization, 'content-type': 'application/json' },
    payload: '{"id":2,"name":"Ivy"}',
  })
  t.equal(unprefixed.statusCode, 404, 'POST /plants without the prefix')
  t.match(unprefixed.json(), { error: 40401, message: String })

  const unprefixedHealth = await app.inject({ method: 'GET', url: '/healthz' })
  t.equal(unprefixedHealth.statusCode, 404, 'GET /healthz without the prefix')
  t.match(unprefixedHealth.json(), { error: 40401, message: String })

  const wrongMethod = await send({ method: 'PUT', url: '/api/v1/plants', headers: { authorization } })
  t.equal(wrongMethod.statusCode, 405)
  t.match(wrongMethod.body, { error: 40501 })
  t.equal(wrongMethod.headers.allow, 'GET, POST')

  const health = await send({ method: 'GET', url: '/api/v1/healthz' })
  t.equal(health.statusCode, 200)
  t.strictSame(health.body, { status: 'ok' })

  const readiness = await send({ method: 'GET', url: '/api/v1/readyz' })
  t.equal(readiness.statusCode, 200)

  for (const root of ['/api/v1/', '/api/v1']) {
    const redirect = await send({ method: 'GET', url: root })
    t.equal(redirect.statusCode, 302, `GET ${root}`)
    t.equal(redirect.headers.location, '/api/v1/docs', `GET ${root} redirects to the reference under the prefix`)
    t.equal((await send({ method: 'POST', url: root })).headers.allow, 'GET', `POST ${root} is a 405`)
  }
  t.equal((await app.inject({ method: 'GET', url: '/' })).statusCode, 404, 'GET / without the prefix')

  const unknown = await send({ method: 'GET', url: '/api/v1/nope' })
  t.equal(unknown.statusCode, 404)
  t.match(unknown.body, { error: 40401 })
})
