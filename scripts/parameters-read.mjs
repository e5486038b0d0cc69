// Every parameter openapi.yaml declares (path, query or header) must be read by its operation's
// handler: a parameter that is validated and then ignored (a `tag` filter that filters nothing)
// answers as if the spec had no such parameter. Read from the compiler, not from the text: a
// parameter is read where a handler under src/handlers/ takes the property the generated
// `operations` type declares for it (`request.query.limit`, `{ params: { id } }`,
// `headers['if-match']`), through the handler's own types (src/handlers/typed-handler.ts).
import { join, relative } from 'node:path'

const locations = ['path', 'query', 'header']

// The parameters the generated types declare, each with the symbol of its property.
function declaredParameters (ts, checker, generated) {
  const operations = generated.statements.find((statement) => ts.isInterfaceDeclaration(statement) && statement.name.text === 'operations')
  if (operations === undefined) throw new Error('generated/openapi.d.ts declares no operations')
  const declared = []
  for (const operation of operations.members) {
    const operationId = operation.name.text
    const parameters = operation.type?.members?.find((member) => member.name?.text === 'parameters')
    for (const group of parameters?.type?.members ?? []) {
      if (!locations.includes(group.name?.text)) continue
      for (const parameter of group.type?.members ?? []) {
        const name = ts.isStringLiteral(parameter.name) ? parameter.name.text : parameter.name.getText(generated)
        declared.push({ operationId, location: group.name.text, name, symbol: checker.getSymbolAtLocation(parameter.name) })
      }
    }
  }
  return declared
}

// The symbols of the properties the handlers read, each traced back through the mapped types it
// came through (Decoded<…>, lower-cased header names) to where it was declared.
function symbolsRead (ts, checker, sourceFiles) {
  const read = new Set()
  const addRoots = (symbol) => {
    if (symbol === undefined) return
    for (const root of checker.getRootSymbols(symbol)) {
      read.add(root)
      // A property of a mapped type is linked to its origin one step at a time.
      if (root !== symbol) addRoots(root)
    }
  }
  const visit = (node) => {
    if (ts.isPropertyAccessExpression(node)) addRoots(checker.getSymbolAtLocation(node.name))
    else if (ts.isElementAccessExpression(node)) {
      const type = checker.getTypeAtLocation(node.expression)
      if (ts.isStringLiteralLike(node.argumentExpression)) addRoots(type.getProperty(node.argumentExpression.text))
    } else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
      const key = node.propertyName ?? node.name
      if (ts.isIdentifier(key) || ts.isStringLiteralLike(key)) addRoots(checker.getTypeAtLocation(node.parent).getProperty(key.text))
    }
    ts.forEachChild(node, visit)
  }
  for (const sourceFile of sourceFiles) visit(sourceFile)
  return read
}

// The parameters no handler reads: [{ operationId, location, name }].
export function unreadParameters (ts, program, projectRoot) {
  const checker = program.getTypeChecker()
  const generated = program.getSourceFile(join(projectRoot, 'generated', 'openapi.d.ts'))
  if (generated === undefined) throw new Error('the build holds no generated/openapi.d.ts')
  const handlers = program.getSourceFiles().filter((file) => relative(projectRoot, file.fileName).startsWith(join('src', 'handlers')))
  const read = symbolsRead(ts, checker, handlers)
  return declaredParameters(ts, checker, generated)
    .filter(({ symbol }) => symbol === undefined || !read.has(symbol))
    .map(({ operationId, location, name }) => ({ operationId, location, name }))
}
