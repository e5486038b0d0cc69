import t from 'tap'
import { buildTestApp, testToken } from './support/helper.js'
import { allowOf, undeclaredMethodsOf } from './support/declared-methods.js'

// The routes come from openapi.yaml alone: what it declares answers, an undeclared path is a
// 404 and an undeclared method on a declared path is a 405 naming the methods it does declare.

const authorization = `Bearer ${testToken}`

t.test('an undeclared path is a 404 40401 with the Error body', async (t) => {
  const { send } = await buildTestApp(t)
  for (const url of ['/nope', '/plants/1/leaves', '/plant/1', '/PLANTS', '/healthz/', '/index.html']) {
    for (const method of ['GET', 'POST'] as const) {
      const answer = await send({ method, url, headers: { authorization } })
      t.equal(answer.statusCode, 404, `${method} ${url}`)
      t.match(answer.body, { error: 40401, message: String }, `${method} ${url}`)
      t.equal(answer.headers.allow, undefined, `${method} ${url} has no Allow header`)
    }
  }
})

t.test('every method /plants does not declare is a 405 40501 with Allow: GET, POST', async (t) => {
  const { send, app } = await buildTestApp(t)
  for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const) {
    const answer = await send({ method, url: '/plants', headers: { authorization } })
    t.equal(answer.statusCode, 405, method)
    t.match(answer.body, { error: 40501, message: String }, method)
    t.equal(answer.headers.allow, 'GET, POST', method)
  }

  for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
    const answer = await send({
      method,
      url: '/plants',
      headers: { authorization, 'content-type': 'application/json' },
      payload: '{"id":1,"name":"Fern"}',
    })
    t.equal(answer.statusCode, 405, `${method} with a valid NewPlant body`)
    t.equal(answer.headers.allow, 'GET, POST', `${method} with a valid NewPlant body`)
  }

  // A HEAD answer has no body, so it cannot be parsed as the Error body.
  const head = await app.inject({ method: 'HEAD', url: '/plants', headers: { authorization } })
  t.equal(head.statusCode, 405, 'HEAD')
  t.equal(head.headers.allow, 'GET, POST', 'HEAD')
  t.equal(head.body, '', 'HEAD has no body')
})

t.test('an undeclared method is a 405 even without credentials', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ method: 'PUT', url: '/plants' })
  t.equal(answer.statusCode, 405)
  t.match(answer.body, { error: 40501 })
  t.equal(answer.headers.allow, 'GET, POST')
  t.equal(answer.headers['www-authenticate'], undefined)
})

t.test('a method the operational endpoints do not declare is a 405 with Allow: GET', async (t) => {
  const { send } = await buildTestApp(t)
  for (const url of ['/', '/healthz', '/readyz', '/openapi.json', '/openapi.yaml']) {
    for (const method of ['POST', 'PUT', 'DELETE'] as const) {
      const answer = await send({ method, url, headers: { authorization, 'content-type': 'application/json' }, payload: '{}' })
      t.equal(answer.statusCode, 405, `${method} ${url}`)
      t.match(answer.body, { error: 40501 }, `${method} ${url}`)
      t.equal(answer.headers.allow, 'GET', `${method} ${url}`)
    }
  }
})

t.test('404 and 405 are decided before any body is read, whatever the body', async (t) => {
  const { send } = await buildTestApp(t, { BODY_LIMIT: 1024 })
  const bodies: Array<{ headers: Record<string, string>, payload?: string }> = [
    { headers: { 'content-type': 'text/plain' }, payload: 'hello' },
    { headers: { 'content-type': 'application/json' }, payload: '{bad' },
    { headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ pad: 'x'.repeat(5000) }) },
    { headers: { 'content-type': 'application/json' } },
  ]
  const requests = [
    { method: 'PUT', url: '/plants', status: 405, allow: 'GET, POST' },
    { method: 'DELETE', url: '/plants', status: 405, allow: 'GET, POST' },
    { method: 'OPTIONS', url: '/plants', status: 405, allow: 'GET, POST' },
    ...undeclaredMethodsOf('/plants/{id}').map((method) => ({ method, url: '/plants/1', status: 405, allow: allowOf('/plants/{id}') })),
    { method: 'POST', url: '/healthz', status: 405, allow: 'GET' },
    { method: 'POST', url: '/nope', status: 404, allow: undefined },
  ]
  for (const { method, url, status, allow } of requests) {
    for (const body of bodies) {
      const answer = await send({ method, url, ...body })
      const label = `${method} ${url} with ${body.headers['content-type']} ${body.payload?.slice(0, 10) ?? '(no body)'}`
      t.equal(answer.statusCode, status, label)
      t.equal(answer.headers.allow, allow, label)
    }
  }
})

t.test('a method Fastify does not route is still a 405 on a declared path', async (t) => {
  const { send } = await buildTestApp(t)
  for (const method of ['PROPFIND', 'SEARCH', 'MKCOL', 'LOCK', 'QUERY'] as const) {
    const answer = await send({ method, url: '/plants', headers: { authorization } })
    t.equal(answer.statusCode, 405, method)
    t.equal(answer.headers.allow, 'GET, POST', method)
  }
})

t.test('a 404 message names the path without its query string', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ method: 'GET', url: '/nope?access_token=secret-in-query' })
  t.same(answer.body, { error: 40401, message: 'no route for GET /nope' })
})

t.test('a percent-encoded path is routed as the router decodes it', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ method: 'PUT', url: '/pl%61nts' })
  t.equal(answer.statusCode, 405)
  t.equal(answer.headers.allow, 'GET, POST')
})
