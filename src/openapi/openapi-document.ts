import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse as parseYaml } from 'yaml'
import { escapeForPattern } from './literal-pattern.js'

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
