import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

// The files the API reference page loads: Swagger UI from its npm package (never a CDN) and the
// page's own start-up script. Read once, when the app is built, and served from memory as bytes:
// every response writes the same Buffer to its socket, which copies nothing and encodes nothing,
// where a string (the bundle is megabytes) was encoded to UTF-8 again for every response, and a
// stream from disk would hold a file handle and read buffers for every slow reader.

export interface ApiReferenceFile {
  readonly contentType: string
  readonly body: Buffer
}

const require = createRequire(import.meta.url)
const swaggerUiFolder = dirname(require.resolve('swagger-ui-dist/package.json'))

// The page and its script use relative URLs only, so they work under any BASE_PATH: from
// {BASE_PATH}/docs, "docs/x" is {BASE_PATH}/docs/x and "openapi.json" is {BASE_PATH}/openapi.json.
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

// Swagger UI is given the served document with two changes, for this page only: "Try it out"
// sends requests to the service the page was loaded from (its origin and BASE_PATH, whatever
// its PORT or the proxy in front of it), and the paths marked `x-api-reference: hidden` (the
// page's own files) are not listed. openapi.json rather than openapi.yaml: the page parses JSON
// itself. No online validator badge, and no loading another document from the query string.
const startUpScript = `window.addEventListener('load', async function () {
  try {
    const response = await fetch(new URL('openapi.json', window.location.href))
    if (!response.ok) throw new Error('GET openapi.json answered ' + response.status)
    const spec = await response.json()
    spec.servers = [{ url: new URL('.', window.location.href).href.replace(/\\/$/, ''), description: 'This service' }]
    for (const [path, pathItem] of Object.entries(spec.paths)) {
      if (pathItem['x-api-reference'] === 'hidden') delete spec.paths[path]
    }
    window.apiReference = SwaggerUIBundle({
      spec,
      dom_id: '#api-reference',
      validatorUrl: null,
      queryConfigEnabled: false,
      deepLinking: true,
      presets: [SwaggerUIBundle.presets.apis],
      layout: 'BaseLayout',
    })
  } catch (error) {
    document.getElementById('api-reference').textContent = 'The API reference could not be loaded: ' + error.message
  }
})
`

let files: ReadonlyMap<string, ApiReferenceFile> | undefined

// Read on first use and kept: the bundle is large, and tests build many apps.
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
