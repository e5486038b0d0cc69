import { readFileSync } from 'node:fs'
import t from 'tap'
import { findOpenApiFile, loadOpenApiDocument } from '../src/openapi/openapi-document.js'
import { buildTestApp } from './support/helper.js'

// The public endpoints: /healthz, /readyz, /openapi.json and /openapi.yaml answer without
// credentials and ignore any that are sent.

t.test('GET /healthz answers 200 {status: "ok"} without credentials', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ method: 'GET', url: '/healthz' })
  t.equal(answer.statusCode, 200)
  t.strictSame(answer.body, { status: 'ok' })
})

t.test('GET /readyz answers 200 {status: "ready"} without credentials', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ method: 'GET', url: '/readyz' })
  t.equal(answer.statusCode, 200)
  t.strictSame(answer.body, { status: 'ready' })
})

t.test('public endpoints ignore credentials, even invalid ones', async (t) => {
  const { send } = await buildTestApp(t)
  for (const header of ['Bearer unknown-token', 'Bearer', 'Basic dXNlcjpwYXNz']) {
    const answer = await send({ method: 'GET', url: '/healthz', headers: { authorization: header } })
    t.equal(answer.statusCode, 200, header)
    t.equal(answer.headers['www-authenticate'], undefined, header)
  }
})

t.test('GET /openapi.json answers the parsed openapi.yaml without credentials', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ method: 'GET', url: '/openapi.json' })
  t.equal(answer.statusCode, 200)
  t.match(answer.headers['content-type'], /^application\/json/)
  t.strictSame(answer.body, loadOpenApiDocument().document)
})

t.test('GET /openapi.yaml answers openapi.yaml byte for byte without credentials', async (t) => {
  const { send } = await buildTestApp(t)
  const fileBytes = readFileSync(findOpenApiFile())
  const answer = await send({ method: 'GET', url: '/openapi.yaml' })
  t.equal(answer.statusCode, 200)
  t.match(answer.headers['content-type'], /^application\/yaml(;|$)/)
  t.equal(answer.response.body, fileBytes.toString('utf8'))
  t.ok(answer.response.rawPayload.equals(fileBytes), 'the bytes are the file\'s bytes')
})
