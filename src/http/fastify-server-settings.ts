import type { Server, ServerOptions } from 'node:http'

// The settings of Fastify's options that it would apply to a server of its own.
interface FastifyServerSettings {
  readonly http?: ServerOptions
  readonly keepAliveTimeout?: number
  readonly requestTimeout?: number
  readonly connectionTimeout?: number
}

// Node's options for a server that Fastify's serverFactory option creates (src/http/connection-guard.ts).
export function httpOptionsOf (fastifyOptions: unknown): ServerOptions {
  return (fastifyOptions as FastifyServerSettings).http ?? {}
}

// Fastify sets its timeouts on a server it creates itself; a factory's server gets them here,
// with Fastify's defaults.
export function applyFastifyTimeouts (server: Server, fastifyOptions: unknown): void {
  const options = fastifyOptions as FastifyServerSettings
  server.keepAliveTimeout = options.keepAliveTimeout ?? 72_000
  server.requestTimeout = options.requestTimeout ?? 0
  server.setTimeout(options.connectionTimeout ?? 0)
}
