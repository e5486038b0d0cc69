// `npm run lint` checks the house's shape with dependency-cruiser: no import circle under src/
// (type-only imports included), and no import that runs back up a layer. Layers, from the top;
// a module may import its own layer and those below it. docs/design.md draws the same picture.
const layers = [
  ['entry points (they read the environment and start things)', '^src/(server|migrate|token-cli|startup-summary)[.]ts$|^src/(cli|mock)/'],
  ['the app (wiring: Fastify, its plugins, the request path)', '^src/(app|fastify-options|request-path)[.]ts$|^src/plugins/'],
  ['the handlers', '^src/handlers/'],
  ['what the request path is made of', '^src/(auth|rate-limit|observability|http|api-reference|webhooks)/'],
  ['where a webhook may be sent (the endpoint URL policy, which requests and deliveries both apply)', '^src/endpoint-urls/'],
  ['the spec', '^src/openapi/'],
  ['the store', '^src/store/'],
  ['the base (settings, error codes, exact int64, JSON)', '^src/(config|errors|int64|json)/'],
]
const layered = layers.map(([, path]) => path)

const upward = layers.flatMap(([name, path], index) => index === 0
  ? []
  : [{
      name: `no-upward-from-${name.split(' ')[1] ?? name}`,
      comment: `${name} must not import from a layer above it`,
      severity: 'error',
      from: { path },
      to: { path: layered.slice(0, index).join('|') },
    }])

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'an import circle under src/, type-only imports included',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...upward,
    {
      name: 'no-unlayered-module',
      comment: 'every module under src/ belongs to a layer of .dependency-cruiser.cjs (the client is packed on its own)',
      severity: 'error',
      from: { path: '^src/', pathNot: [...layered, '^src/client/'].join('|') },
      to: {},
    },
    {
      name: 'no-import-of-an-unlayered-module',
      comment: 'every module under src/ belongs to a layer of .dependency-cruiser.cjs (the client is packed on its own)',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/', pathNot: [...layered, '^src/client/'].join('|') },
    },
    {
      name: 'no-orphans',
      comment: 'a module under src/ that imports nothing and that nothing imports is dead code',
      severity: 'error',
      from: { orphan: true, path: '^src/.+[.]ts$' },
      to: {},
    },
    {
      name: 'client-stands-alone',
      comment: 'the client is packed on its own (@plant-store/client): it may use exact int64 only',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/(client|int64)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
}
