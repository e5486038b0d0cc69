import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { runCommand } from './support/run-command.js'

// scripts/provision-openapi-generator.sh on a machine without Java, or without Maven, says what
// to install, rather than failing somewhere inside the wrapper. A copy of the script runs in a
// folder of its own, with a PATH that holds only the tools named.

const projectRoot = join(import.meta.dirname, '..')
const scriptTools = ['bash', 'node', 'dirname', 'sed', 'mktemp', 'mkdir', 'mv', 'rm']

async function provisionWith (t: Test, tools: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const folder = t.testdir({ scripts: {}, bin: {} })
  copyFileSync(join(projectRoot, 'scripts', 'provision-openapi-generator.sh'), join(folder, 'scripts', 'provision-openapi-generator.sh'))
  writeFileSync(join(folder, 'openapitools.json'), JSON.stringify({ 'generator-cli': { version: '7.25.0', storageDir: '.tools/openapi-generator' } }))
  for (const tool of tools) {
    const { stdout } = await runCommand('bash', ['-c', `command -v ${tool}`], { timeout: 5000 })
    if (stdout.trim() !== '') symlinkSync(stdout.trim(), join(folder, 'bin', tool))
  }
  mkdirSync(join(folder, '.tools'))
  return runCommand(join(folder, 'bin', 'bash'), [join(folder, 'scripts', 'provision-openapi-generator.sh')], {
    timeout: 20_000, env: { PATH: join(folder, 'bin') },
  })
}

t.test('without Java, the provisioning script says to install Java', async (t) => {
  const { code, stderr } = await provisionWith(t, scriptTools)
  t.equal(code, 1)
  t.match(stderr, 'Java (11 or later) is needed to generate the SDKs, and was not found on PATH.')
  t.match(stderr, 'apt-get install default-jdk-headless')
})

t.test('with Java but without Maven, and no JAR yet, it says to install Maven', async (t) => {
  const { code, stderr } = await provisionWith(t, [...scriptTools, 'java'])
  t.equal(code, 1)
  t.match(stderr, 'Maven is needed to generate the SDKs, and was not found on PATH.')
  t.match(stderr, 'apt-get install maven')
})
