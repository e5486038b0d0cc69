import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse as parseYaml } from 'yaml'

export const httpMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const
export type HttpMethod = (typeof httpMethods)[number]

// A security requirement: scheme names, each with its scopes. A list of them is an OR; the
// schemes inside one requirement are an AND.
export type SecurityRequirement = Readonly<Record<string, readonly string[]>>

export interface OpenApiOperation {
  readonly operationId?: string
  readonly parameters?: readonly unknown[]
  readonly requestBody?: {
    readonly required?: boolean
    readonly content?: Readonly<Record<string, { readonly schema?: unknown } | undefined>>
  }
  readonly responses?: Readonly<Record<string, unknown>>
  readonly security?: readonly SecurityRequirement[]
  // The setting whose token the operation requires once it is set (src/request-path.ts).
  readonly 'x-operator-token'?: unknown
}

export type OpenApiPathItem = Partial<Record<HttpMethod, OpenApiOperation>>

// The parts of an OpenAPI document this service reads itself; fastify-openapi-glue reads the rest.
export interface OpenApiDocument {
  readonly openapi: string
  readonly security?: readonly SecurityRequirement[]
  readonly paths: Readonly<Record<string, OpenApiPathItem>>
  readonly [key: string]: unknown
}

export interface LoadedOpenApiDocument {
  readonly document: OpenApiDocument
  // The file as it is checked in, served verbatim at /openapi.yaml.
  readonly yamlText: string
}

export interface OperationEntry {
  readonly path: string
  readonly method: HttpMethod
  readonly operation: OpenApiOperation
}

// The checked-in openapi.yaml at the project's root, found from this module whether it runs
// from src/ (tests) or from dist/src/ (the built service).
export function findOpenApiFile (): string {
  let folder = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = join(folder, 'openapi.yaml')
    if (existsSync(candidate)) return candidate
    const parent = dirname(folder)
    if (parent === folder) throw new Error('openapi.yaml was not found above ' + fileURLToPath(import.meta.url))
    folder = parent
  }
}

export function loadOpenApiDocument (file = findOpenApiFile()): LoadedOpenApiDocument {
  const yamlText = readFileSync(file, 'utf8')
  return { document: parseYaml(yamlText) as OpenApiDocument, yamlText }
}

// Matches the concrete paths a declared one stands for: itself, or for a template such as
// /docs/{asset}, any value of each parameter within one segment, empty included, as Fastify's
// router matches them. `prefix` is BASE_PATH; under one, the root is routed with and without
// its trailing slash (/api/v1/ and /api/v1).
export function pathTemplatePattern (path: string, prefix = ''): RegExp {
  const escaped = escapeForPattern(prefix + path)
  const optionalSlash = prefix !== '' && path === '/' ? '?' : ''
  return new RegExp(`^${escaped.replace(/\\\{\w+\\\}/g, '[^/]*')}${optionalSlash}$`)
}

export function listOperations (document: OpenApiDocument): OperationEntry[] {
  return Object.entries(document.paths).flatMap(([path, pathItem]) =>
    httpMethods.flatMap((method) => {
      const operation = pathItem[method]
      return operation === undefined ? [] : [{ path, method, operation }]
    }))
}

export function describeOperation ({ method, path, operation }: OperationEntry): string {
  return `${method.toUpperCase()} ${path} (${operation.operationId ?? 'no operationId'})`
}

// The requirements that apply to an operation: its own, or else the document's.
export function securityOf (document: OpenApiDocument, operation: OpenApiOperation): readonly SecurityRequirement[] {
  return operation.security ?? document.security ?? []
}

// The node a reference such as '#/components/schemas/Plant' names in this document.
export function resolveLocalRef (document: object, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined
  return ref.slice(2).split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((parent, key) => (parent as Record<string, unknown> | undefined)?.[key], document)
}

// `text` written as the source of a regular expression that matches it as written: its dots,
// brackets and the rest taken literally, inside a character class too (RegExp.escape is not in
// Node 20). For patterns without the `u` flag, under which an escaped `-` outside a class is an
// error.
export function escapeForPattern (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')
}

// Every role some operation's security requirement names (`bearerAuth: [plants:write]`): the
// roles a credential can be given, sorted.
export function roleNamesOf (document: OpenApiDocument): string[] {
  const names = listOperations(document).flatMap(({ operation }) =>
    securityOf(document, operation).flatMap((requirement) => Object.values(requirement).flat()))
  return [...new Set(names)].sort()
}

interface Parameter {
  readonly $ref?: string
  readonly name?: string
  readonly in?: string
  readonly schema?: { readonly default?: unknown }
}

export interface DeclaredParameter {
  readonly name: string
  readonly in: string
  readonly default?: unknown
}

// The parameters openapi.yaml declares for an operation, its path's and its own, in the order
// written: each with where it goes and its default.
export function parametersOf (document: OpenApiDocument, operationId: string): DeclaredParameter[] {
  const entry = listOperations(document).find(({ operation }) => operation.operationId === operationId)
  const pathItem = document.paths[entry?.path ?? ''] as { parameters?: readonly Parameter[] } | undefined
  return [...(pathItem?.parameters ?? []), ...((entry?.operation.parameters ?? []) as readonly Parameter[])]
    .map((parameter) => (parameter.$ref === undefined ? parameter : resolveLocalRef(document, parameter.$ref)) as Parameter)
    .map((parameter) => ({ name: parameter.name ?? '', in: parameter.in ?? '', ...(parameter.schema?.default === undefined ? {} : { default: parameter.schema.default }) }))
}

// The default openapi.yaml declares for an operation's parameter (the validator adds none to a
// request, as it adds nothing anywhere): undefined when there is none.
export function parameterDefault (document: OpenApiDocument, operationId: string, name: string): unknown {
  return parametersOf(document, operationId).find((parameter) => parameter.name === name)?.default
}
