import { mkdirSync, writeFileSync } from 'node:fs'
import { runCommand } from './run-command.js'

// A project of a consumer's own, in a new folder, that installs a packed package as another
// project does: `npm install <tarball>`, from the registry's cache where it can.
export async function createConsumerProject (folder: string, tarball: string, timeout: number): Promise<void> {
  mkdirSync(folder, { recursive: true })
  writeFileSync(`${folder}/package.json`, `${JSON.stringify({ private: true, type: 'module' })}\n`)
  const result = await runCommand('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], { cwd: folder, timeout })
  if (result.code !== 0) throw new Error(`npm install ${tarball} failed (exit ${String(result.code)}):\n${result.stdout}\n${result.stderr}`)
}
