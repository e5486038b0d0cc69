import t from 'tap'
import { loadOpenApiDocument } from '../src/openapi/openapi-document.js'
import { buildTestApp } from './support/helper.js'

// GET /docs and the files it loads, as HTTP sees them; test/api-reference-browser.test.ts
// drives the page in a real browser.

t.test('the API reference page is public HTML that loads only files the service serves', async (t) => {
  const { send } = await buildTestApp(t)
  const page = await send({ method: 'GET', url: '/docs' })
  t.equal(page.statusCode, 200)
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8')
  t.equal(page.headers['content-security-policy'], "default-src 'self'; script-src 'self'; " +
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'", 'requests go only to this service')
  const sources = [...String(page.body).matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1])
  t.same(sources, ['data:,', 'docs/swagger-ui.css', 'docs/swagger-ui-bundle.js', 'docs/api-reference.js'],
    'relative URLs only: no CDN, and any BASE_PATH works')
})

t.test('the service\'s root redirects to the page, for now (302), with no body', async (t) => {
  const { send } = await buildTestApp(t)
  const root = await send({ method: 'GET', url: '/?from=bookmark' })
  t.equal(root.statusCode, 302)
  t.equal(root.headers.location, '/docs')
  t.equal(root.response.body, '')
  t.equal((await send({ method: 'GET', url: String(root.headers.location) })).statusCode, 200, 'where the page is')
})

t.test('the page\'s files come from the installed Swagger UI package and the service itself', async (t) => {
  const { send } = await buildTestApp(t)
  const files: ReadonlyArray<[string, string, RegExp]> = [
    ['swagger-ui.css', 'text/css; charset=utf-8', /\.swagger-ui/],
    ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8', /SwaggerUIBundle/],
    ['api-reference.js', 'text/javascript; charset=utf-8', /new URL\('openapi\.json', window\.location\.href\)/],
  ]
  for (const [name, contentType, content] of files) {
    const file = await send({ method: 'GET', url: `/docs/${name}` })
    t.equal(file.statusCode, 200, name)
    t.equal(file.headers['content-type'], contentType, name)
    t.equal(file.headers['cache-control'], 'public, max-age=3600', name)
    t.match(file.body, content, name)
  }
})

t.test('an unknown file is a 404 and a malformed name a 400, each an Error body', async (t) => {
  const { send } = await buildTestApp(t)
  const unknown = await send({ method: 'GET', url: '/docs/index.html?x=1' })
  t.equal(unknown.statusCode, 404)
  t.same(unknown.body, { error: 40401, message: 'no route for GET /docs/index.html' })
  for (const url of ['/docs/..%2Fpackage.json', '/docs/', `/docs/${'a'.repeat(65)}`, '/docs/a%00b']) {
    const malformed = await send({ method: 'GET', url })
    t.equal(malformed.statusCode, 400, url)
    t.equal((malformed.body as { error: number }).error, 40003, url)
  }
})

t.test('other methods on the page and its files are 405s, an empty file name included', async (t) => {
  const { send } = await buildTestApp(t)
  for (const [method, url] of [['POST', '/docs'], ['POST', '/docs/'], ['DELETE', '/docs/x.js']] as const) {
    const answer = await send({ method, url })
    t.equal(answer.statusCode, 405, `${method} ${url}`)
    t.equal(answer.headers.allow, 'GET', `${method} ${url}`)
  }
})

t.test('under a BASE_PATH the page and its files move with it', async (t) => {
  const { send } = await buildTestApp(t, { BASE_PATH: '/api/v1' })
  t.equal((await send({ method: 'GET', url: '/api/v1/docs' })).statusCode, 200)
  t.equal((await send({ method: 'GET', url: '/api/v1/docs/api-reference.js' })).statusCode, 200)
  t.equal((await send({ method: 'GET', url: '/api/v1/' })).headers.location, '/api/v1/docs')
  t.equal((await send({ method: 'GET', url: '/docs' })).statusCode, 404)
})

// The page, not the document, names the service it was loaded from (see the browser test): the
// served documents stay the checked-in one, whose server is a local instance on the default port.
t.test('the served documents are the checked-in one, its servers and hidden paths included', async (t) => {
  const { document, yamlText } = loadOpenApiDocument()
  const { send } = await buildTestApp(t, { BASE_PATH: '/api/v1' })
  t.equal((await send({ method: 'GET', url: '/api/v1/openapi.yaml' })).response.body, yamlText)
  const json = (await send({ method: 'GET', url: '/api/v1/openapi.json' })).response.body
  t.equal(json, JSON.stringify(document))
  const served = JSON.parse(json) as { servers: Array<{ url: string }>, paths: Record<string, Record<string, unknown>> }
  t.same(served.servers.map(({ url }) => url), ['http://127.0.0.1:3000'])
  t.equal(served.paths['/docs/{asset}']?.['x-api-reference'], 'hidden', 'the page\'s files are declared, marked for the page to leave out')
})
