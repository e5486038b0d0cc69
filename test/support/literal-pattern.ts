// A regular expression that matches `text` as written: its dots, brackets and the rest taken
// literally (RegExp.escape is not in Node 20). Without the `u` flag, under which `\-` and `\/`
// would be errors.
export function literalPattern (text: string): RegExp {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
}
