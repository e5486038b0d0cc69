// `text` written as the source of a regular expression that matches it as written: its dots,
// brackets and the rest taken literally, inside a character class too (RegExp.escape is not in
// Node 20). For patterns without the `u` flag, under which an escaped `-` outside a class is an
// error.
export function escapeForPattern (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')
}
