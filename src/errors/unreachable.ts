// The end of every switch over a union of kinds (`default: return unreachable(kind)`): a kind
// no case handles fails to compile here, so that a kind added to a union makes `npm run build`
// name every switch that must learn it. Reached at run time only through a value the types lie
// about, which is a bug of the service: a 500.
export function unreachable (kind: never): never {
  throw new Error(`a kind no branch handles: ${String(kind)}`)
}
