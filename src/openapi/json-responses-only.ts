// fastify-openapi-glue lists every media type of the spec, responses' included, and warns at
// start for each one no body parser reads ("ContentTypeParser for 'text/html' not found"). Only
// request bodies are parsed, and the service answers a body of any type but JSON with 415, so
// those warnings say nothing true. The copy of the spec the glue is given leaves out the response
// media types that are not JSON: the routes it builds are the same, no serializer is lost (a
// text answer is sent as the string it is), and a clean start logs no warning.
export function withJsonResponsesOnly<T extends object> (document: T): T {
  const copy = structuredClone(document) as T & OpenApiParts
  const responseLists = [
    ...Object.values(copy.paths ?? {}).flatMap((pathItem) =>
      Object.values(pathItem ?? {}).map((operation) => (operation as { responses?: ResponseList } | undefined)?.responses)),
    copy.components?.responses,
  ]
  for (const responses of responseLists) {
    for (const response of Object.values(responses ?? {})) {
      const content = response?.content
      if (response === undefined || content === undefined) continue
      for (const mediaType of Object.keys(content)) {
        if (!isJson(mediaType)) Reflect.deleteProperty(content, mediaType)
      }
      if (Object.keys(content).length === 0) Reflect.deleteProperty(response, 'content')
    }
  }
  return copy
}

interface ResponseObject { content?: Record<string, unknown> }
type ResponseList = Record<string, ResponseObject | undefined>
interface OpenApiParts {
  paths?: Record<string, Record<string, unknown> | undefined>
  components?: { responses?: ResponseList }
}

function isJson (mediaType: string): boolean {
  const essence = mediaType.split(';')[0]!.trim().toLowerCase()
  return essence === 'application/json' || essence.endsWith('+json')
}
