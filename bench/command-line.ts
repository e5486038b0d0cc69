// A count or a length from a bench's command line, refused with the option's name when it is not
// one: `--rounds 0` printed medians of nothing (-Infinity and NaN) rather than an error.
export function positiveOption<Options extends Readonly<Record<string, unknown>>> (
  options: Options, name: keyof Options & string, wholeNumber: boolean
): number {
  const value = Number(options[name])
  if (!(value > 0) || !Number.isFinite(value) || (wholeNumber && !Number.isSafeInteger(value))) {
    process.stderr.write(`--${name} takes ${wholeNumber ? 'a whole number' : 'a number'} above 0, not "${String(options[name])}"\n`)
    process.exit(2)
  }
  return value
}
