// `text` written as the source of a regular expression that matches it as written: its dots,
// brackets and the rest taken literally (RegExp.escape is not in Node 20). For patterns without
// the `u` flag, under which `\-` and `\/` would be errors.
export function escapeForPattern (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')
}

export function literalPattern (text: string): RegExp {
  return new RegExp(escapeForPattern(text))
}
