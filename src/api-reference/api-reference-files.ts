import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

// The files the API reference page loads: Swagger UI from its npm package (never a CDN) and the
// page's own start-up script. Read once, when the app is built, and served from memory as bytes:
// every response writes the same Buffer to its socket, which copies nothing and encodes nothing,
// where a string (the bundle is 1.7 MB) was encoded to UTF-8 again for every response, and a
// stream from disk would hold a file handle and read buffers for every slow reader.

export interface ApiReferenceFile {
  readonly contentType: string
  readonly body: Buffer
}

const require = createRequire(import.meta.url)
const swaggerUiFolder = dirname(require.resolve('swagger-ui-dist/package.json'))

// The page and its script use relative URLs only, so they work under any BASE_PATH: from
// {BASE_PATH}/docs, "docs/x" is {BASE_PATH}/docs/x and "openapi.yaml" is {BASE_PATH}/openapi.yaml.
export const apiReferencePage = Buffer.from(`<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Plant Store API reference</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="docs/swagger-ui.css">
  <style>
    /* Swagger UI gives table cells no horizontal padding: without some, the header cells of
       the description's error table run together. */
    .swagger-ui .info table th, .swagger-ui .info table td { padding-right: 1.5em; }
  </style>
</head>
<body>
  <div id="api-reference"></div>
  <script src="docs/swagger-ui-bundle.js"></script>
  <script src="docs/api-reference.js"></script>
</body>
</html>
`)

// Swagger UI reads the served openapi.yaml; "Try it out" sends requests to the spec's first
// server, ".", which is this service whatever its host, port and BASE_PATH. No online validator
// badge, and no loading another document from the page's query string.
const startUpScript = `window.addEventListener('load', function () {
  window.apiReference = SwaggerUIBundle({
    url: new URL('openapi.yaml', window.location.href).href,
    dom_id: '#api-reference',
    validatorUrl: null,
    queryConfigEnabled: false,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  })
})
`

let files: ReadonlyMap<string, ApiReferenceFile> | undefined

// Read on first use and kept: the bundle is 1.7 MB, and tests build many apps.
export function loadApiReferenceFiles (): ReadonlyMap<string, ApiReferenceFile> {
  const fromSwaggerUi = (name: string, contentType: string): [string, ApiReferenceFile] =>
    [name, { contentType, body: readFileSync(join(swaggerUiFolder, name)) }]
  files ??= new Map([
    fromSwaggerUi('swagger-ui.css', 'text/css; charset=utf-8'),
    fromSwaggerUi('swagger-ui-bundle.js', 'text/javascript; charset=utf-8'),
    ['api-reference.js', { contentType: 'text/javascript; charset=utf-8', body: Buffer.from(startUpScript) }],
  ])
  return files
}
