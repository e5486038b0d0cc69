import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Test } from 'tap'
import { type CommandResult, runCommand } from './run-command.js'
import { testFolder } from './test-folder.js'

const projectRoot = join(import.meta.dirname, '..', '..')

// The files the breaking-change gate and the release command read and write.
const copied = [
  'openapi.yaml',
  'contract/released',
  'scripts/check-breaking-changes.mjs',
  'scripts/check-breaking-changes.optic.yml',
  'scripts/breaking-changes',
  'scripts/release.mjs',
]

// Git as a test runs it: an identity of its own, none of the machine's configuration.
const gitEnvironment = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@localhost',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@localhost',
}

export interface GateRepository {
  readonly folder: string
  git: (...args: string[]) => Promise<CommandResult>
  // Runs one of the copied scripts (scripts/<name>) with node, in the repository.
  script: (name: string, ...args: string[]) => Promise<CommandResult>
}

// A git repository of the test's own, on branch main with one commit of the project's spec,
// released contract and gate scripts (the project's node_modules linked in), so that a test can
// commit, branch and tag without touching the project's repository.
export async function gateRepository (t: Test): Promise<GateRepository> {
  const folder = testFolder(t)
  for (const path of copied) {
    mkdirSync(join(folder, path, '..'), { recursive: true })
    cpSync(join(projectRoot, path), join(folder, path), { recursive: true })
  }
  symlinkSync(join(projectRoot, 'node_modules'), join(folder, 'node_modules'))
  writeFileSync(join(folder, '.gitignore'), 'node_modules\n')
  const git = async (...args: string[]): Promise<CommandResult> =>
    runCommand('git', args, { cwd: folder, env: gitEnvironment, timeout: 20_000 })
  const script = async (name: string, ...args: string[]): Promise<CommandResult> =>
    runCommand(process.execPath, [join(folder, 'scripts', name), ...args], { cwd: folder, env: gitEnvironment, timeout: 120_000 })
  for (const args of [['init', '--quiet', '--initial-branch=main'], ['add', '.'], ['commit', '--quiet', '--message', 'the project as it is']]) {
    const { code, stderr } = await git(...args)
    if (code !== 0) throw new Error(`git ${args.join(' ')}: ${stderr}`)
  }
  return { folder, git, script }
}
