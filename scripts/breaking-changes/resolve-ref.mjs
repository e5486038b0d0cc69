// Follows a local $ref ("#/components/schemas/Plant") to what it names; a node without one is
// itself, and a missing node an empty object, so that callers can read its keys.
export function resolve (document, node) {
  let resolved = node
  const seen = new Set()
  while (resolved?.$ref !== undefined && !seen.has(resolved)) {
    seen.add(resolved)
    resolved = resolved.$ref.slice(2).split('/')
      .map((part) => decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce((parent, key) => parent?.[key], document)
  }
  return resolved ?? {}
}
