import { httpMethods, loadOpenApiDocument, type OpenApiPathItem } from '../../src/openapi/openapi-document.js'

// What openapi.yaml declares for a path, read here rather than written into the tests, so that an
// operation added to a path does not break tests of the methods it does not declare.

function pathItemOf (path: string): OpenApiPathItem {
  const pathItem = loadOpenApiDocument().document.paths[path]
  if (pathItem === undefined) throw new Error(`openapi.yaml declares no path ${path}`)
  return pathItem
}

// The Allow header of a 405 on the path: its methods, in the order the service lists them.
export function allowOf (path: string): string {
  const pathItem = pathItemOf(path)
  return httpMethods.filter((method) => pathItem[method] !== undefined).map((method) => method.toUpperCase()).join(', ')
}

// Methods the path does not declare, among those a client may send with a body.
export function undeclaredMethodsOf (path: string): Array<'PUT' | 'PATCH' | 'POST' | 'DELETE'> {
  const pathItem = pathItemOf(path)
  return (['PUT', 'PATCH', 'POST', 'DELETE'] as const).filter((method) => pathItem[method.toLowerCase() as 'put'] === undefined)
}
