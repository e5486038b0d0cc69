// Headers every response carries, errors included: nosniff, so a browser never reads a JSON
// error as HTML, and the request id, so a caller can quote it when reporting a problem.
export function commonResponseHeaders (requestId: string): Record<string, string> {
  return { 'x-content-type-options': 'nosniff', 'x-request-id': requestId }
}
