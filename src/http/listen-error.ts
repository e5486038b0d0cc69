import type { Config } from '../config/config.js'

// Why the service could not listen, in one line that names the setting to change: the stack of
// a failed listen() says "getaddrinfo ENOTFOUND" or "EADDRINUSE" and nothing of HOST or PORT.
export class ListenError extends Error {
  constructor ({ HOST: host, PORT: port }: Pick<Config, 'HOST' | 'PORT'>, cause: unknown) {
    super(`the service could not listen: ${explain(host, port, cause)}`, { cause })
    this.name = 'ListenError'
  }
}

function explain (host: string, port: number, cause: unknown): string {
  const code = (cause as { code?: unknown } | null)?.code
  const hostSetting = `HOST=${JSON.stringify(host)}`
  switch (code) {
    case 'EADDRINUSE':
      return `PORT=${port} on ${hostSetting} is already in use by another process; stop it, or set PORT to a free port`
    case 'EADDRNOTAVAIL':
      return `${hostSetting} is not an address of this machine; set HOST to one of its addresses, such as 127.0.0.1 or 0.0.0.0`
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return `${hostSetting} does not resolve to an address; set HOST to an address of this machine, such as 127.0.0.1 or 0.0.0.0`
    case 'EACCES':
      return `PORT=${port} on ${hostSetting} needs privileges this process does not have; set PORT to 1024 or above`
    default:
      return `${hostSetting} PORT=${port}: ${cause instanceof Error ? cause.message : String(cause)}`
  }
}
