import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

// The options `npm start` gives Node, read from package.json, so that the tests and the
// benchmark run the service as operators do (and a Node that refuses one of them fails the
// tests, not a deployment).
export function startScriptNodeOptions (): string[] {
  const { scripts } = JSON.parse(readFileSync(packageJsonPath(), 'utf8')) as { scripts: { start: string } }
  const command = /node ((?:--\S+ )*)dist\/src\/server\.js/.exec(scripts.start)
  if (command === null) throw new Error(`npm start does not run "node [options] dist/src/server.js": ${scripts.start}`)
  return command[1]!.split(' ').filter((option) => option !== '')
}

// The project's, from the source tree and from dist/ alike.
function packageJsonPath (): string {
  let folder = import.meta.dirname
  while (!existsSync(join(folder, 'package.json'))) {
    if (dirname(folder) === folder) throw new Error('no package.json above this module')
    folder = dirname(folder)
  }
  return join(folder, 'package.json')
}
