import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { Response as InjectResponse } from 'light-my-request'
import type { Test } from 'tap'
import { parse as parseYaml } from 'yaml'
import { httpMethods, loadOpenApiDocument, pathTemplatePattern } from '../../src/openapi/openapi-document.js'

// Checks responses against openapi.yaml itself, never against a hand-copied schema: the status
// must be declared for the operation (404 and 405 answer with the Error schema), the media
// type must be one it declares, the body must match the declared schema (or be empty where the
// response declares none), and, where the response's headers are given, each header it
// declares required must be sent, and each it declares must match its schema.

const { document } = loadOpenApiDocument()
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
ajv.addSchema(document, 'openapi')

interface MediaType { schema?: unknown }
interface HeaderObject { $ref?: string, required?: boolean, schema?: { type?: string } }
interface ResponseObject { $ref?: string, content?: Record<string, MediaType>, headers?: Record<string, HeaderObject> }
type Operation = { responses: Record<string, ResponseObject> }

// Undeclared paths and methods have no operation to declare their 404 and 405; they answer with
// the Error schema all the same.
const errorSchemaPointer = '#/components/schemas/Error'

const validators = new Map<string, ValidateFunction>()
function validatorFor (pointer: string): ValidateFunction {
  let validate = validators.get(pointer)
  if (validate === undefined) {
    validate = ajv.compile({ $ref: `openapi${pointer}` })
    validators.set(pointer, validate)
  }
  return validate
}

function resolve (pointer: string): unknown {
  return pointer.slice(2).split('/').reduce<unknown>((node, part) =>
    (node as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')], document)
}

function escape (part: string): string {
  return part.replaceAll('~', '~0').replaceAll('/', '~1')
}

// One request and its answer, however they were exchanged (inject or a raw socket).
export interface Exchange {
  readonly method: string
  readonly url: string
  readonly statusCode: number
  readonly contentType: string | undefined
  readonly bodyText: string
  // Lowercase names, as Node gives them; when left out, headers are not checked.
  readonly headers?: Readonly<Record<string, string | string[] | number | undefined>>
}

// Returns the parsed body (JSON or YAML; the text of any other media type) for further assertions.
export function assertMatchesSpec (t: Test, response: InjectResponse, basePath = ''): unknown {
  return assertExchangeMatchesSpec(t, {
    method: response.raw.req.method ?? '',
    url: response.raw.req.url ?? '/',
    statusCode: response.statusCode,
    contentType: response.headers['content-type']?.toString(),
    bodyText: response.body,
    headers: response.headers,
  }, basePath)
}

export function assertExchangeMatchesSpec (t: Test, exchange: Exchange, basePath = ''): unknown {
  const method = exchange.method.toLowerCase()
  const url = decodedPath(exchange.url)
  // A path outside BASE_PATH is no path of the spec's, whatever it looks like; under one, the
  // root is routed with and without its trailing slash.
  const local = basePath !== '' && url === basePath ? '/' : url.startsWith(`${basePath}/`) ? url.slice(basePath.length) : undefined
  const path = local === undefined ? undefined : declaredPathFor(local)
  const status = String(exchange.statusCode)
  const pathItem = path === undefined ? undefined : (document.paths as Record<string, Record<string, Operation>>)[path]

  const operation = httpMethods.some((known) => known === method) ? pathItem?.[method] : undefined
  if (operation === undefined) {
    t.equal(status, pathItem === undefined ? '404' : '405', `${method} ${url} is not declared, so only 404 or 405 may answer`)
    return checkBody(t, exchange, { 'application/json': {} }, errorSchemaPointer)
  }
  const declared = operation.responses
  if (declared[status] === undefined && declared.default === undefined) {
    t.fail(`${method} ${String(path)} does not declare status ${status}`)
    return undefined
  }
  let responsePointer = `#/paths/${escape(path ?? '')}/${method}/responses/${declared[status] ? status : 'default'}`
  let responseObject = resolve(responsePointer) as ResponseObject
  if (responseObject.$ref !== undefined) {
    responsePointer = responseObject.$ref
    responseObject = resolve(responsePointer) as ResponseObject
  }
  checkHeaders(t, exchange, responseObject.headers ?? {}, `${responsePointer}/headers`)
  if (responseObject.content === undefined) {
    t.equal(exchange.bodyText, '', `the ${status} response declares no body and has none`)
    return undefined
  }
  return checkBody(t, exchange, responseObject.content, `${responsePointer}/content`)
}

function checkHeaders (t: Test, exchange: Exchange, declared: Record<string, HeaderObject>, headersPointer: string): void {
  if (exchange.headers === undefined) return
  for (const [name, reference] of Object.entries(declared)) {
    const headerPointer = reference.$ref ?? `${headersPointer}/${escape(name)}`
    const header = reference.$ref === undefined ? reference : resolve(reference.$ref) as HeaderObject
    const value = exchange.headers[name.toLowerCase()]
    if (value === undefined) {
      if (header.required === true) t.fail(`the ${exchange.statusCode} response lacks the required ${name} header`)
      continue
    }
    // A header is text; one whose schema is an integer is read as the digits it must be.
    const text = String(value)
    const parsed = header.schema?.type === 'integer' && /^-?\d+$/.test(text) ? Number(text) : text
    const validate = validatorFor(`${headerPointer}/schema`)
    const valid = validate(parsed)
    t.ok(valid, `the ${exchange.statusCode} response's ${name}: ${text} matches its schema${valid ? '' : ': ' + ajv.errorsText(validate.errors)}`)
  }
}

// The path as the router sees it: decoded, or as sent when it cannot be (the service answers
// such a URL with 40007).
function decodedPath (url: string): string {
  const { pathname } = new URL(url, 'http://localhost')
  try {
    return decodeURI(pathname)
  } catch {
    return pathname
  }
}

// The declared path a concrete one falls under: itself, or a template such as /docs/{asset},
// matched as the service's router matches it. Exact paths are tried first.
const declaredPaths = Object.keys(document.paths).map((path) => ({ path, pattern: pathTemplatePattern(path) }))
function declaredPathFor (concrete: string): string | undefined {
  return declaredPaths.find(({ path }) => path === concrete)?.path ??
    declaredPaths.find(({ pattern }) => pattern.test(concrete))?.path
}

// A media type declared with its parameters (the metrics' `text/plain; version=0.0.4; ...`) is
// met only by a Content-Type that has them all; one declared bare, by the type alone.
function declaredMediaTypeOf (content: Record<string, MediaType>, contentType: string): string {
  const [type = '', ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase())
  const withParameters = [type, ...parameters.filter((parameter) => parameter !== '')].join('; ')
  return content[withParameters] !== undefined ? withParameters : type
}

function checkBody (t: Test, exchange: Exchange, content: Record<string, MediaType>, contentPointer: string): unknown {
  const mediaType = declaredMediaTypeOf(content, exchange.contentType ?? '')
  if (content[mediaType] === undefined) {
    t.fail(`content type ${JSON.stringify(mediaType)} is not declared (declared: ${Object.keys(content).join(', ')})`)
    return undefined
  }
  const body = parsedBody(mediaType, exchange.bodyText)
  // A pointer is read as a URI fragment: the spaces and semicolons of parameters are escaped.
  const schemaPointer = contentPointer === errorSchemaPointer
    ? errorSchemaPointer
    : `${contentPointer}/${encodeURIComponent(escape(mediaType))}/schema`
  const validate = validatorFor(schemaPointer)
  const valid = validate(body)
  t.ok(valid, `the ${exchange.statusCode} body matches ${schemaPointer}${valid ? '' : ': ' + ajv.errorsText(validate.errors)}`)
  return body
}

// A schema describes a body as its media type parses it: a YAML document is its mapping, and
// only a page or a script is the text itself.
function parsedBody (mediaType: string, text: string): unknown {
  if (mediaType === 'application/json') return JSON.parse(text)
  if (mediaType === 'application/yaml') return parseYaml(text)
  return text
}

// A webhook the service sent: its body must match the schema openapi.yaml's `webhooks` declares
// for it, and each header it declares (webhook-id, -timestamp, -signature) must be sent and
// match its schema. Returns the parsed body.
export function assertWebhookMatchesSpec (
  t: Test, name: string, headers: Readonly<Record<string, string | string[] | undefined>>, bodyText: string
): unknown {
  const operationPointer = `#/webhooks/${escape(name)}/post`
  const operation = resolve(operationPointer) as { parameters?: Array<{ $ref?: string }> } | undefined
  if (operation === undefined) {
    t.fail(`openapi.yaml declares no webhook ${name}`)
    return undefined
  }
  for (const reference of operation.parameters ?? []) {
    const parameterPointer = reference.$ref ?? ''
    const parameter = resolve(parameterPointer) as { name: string, in: string, required?: boolean }
    const value = headers[parameter.name.toLowerCase()]
    if (parameter.required === true) t.not(value, undefined, `the ${name} webhook sends ${parameter.name}`)
    if (typeof value === 'string') {
      const validate = validatorFor(`${parameterPointer}/schema`)
      t.ok(validate(value), `${parameter.name} of ${name} matches its schema: ${ajv.errorsText(validate.errors)}`)
    }
  }
  const body = JSON.parse(bodyText) as unknown
  const validate = validatorFor(`${operationPointer}/requestBody/content/application~1json/schema`)
  t.ok(validate(body), `the ${name} body matches its schema: ${ajv.errorsText(validate.errors)}`)
  return body
}
