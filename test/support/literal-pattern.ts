import { escapeForPattern } from '../../src/openapi/literal-pattern.js'

// A regular expression that matches `text` as written (a process's output line, an address).
export function literalPattern (text: string): RegExp {
  return new RegExp(escapeForPattern(text))
}
