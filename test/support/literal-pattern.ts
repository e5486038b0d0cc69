import { escapeForPattern } from '../../src/openapi/openapi-document.js'

// A regular expression that matches `text` as written (a process's output line, an address).
export function literalPattern (text: string): RegExp {
  return new RegExp(escapeForPattern(text))
}
