import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

// The fenced code blocks of the README and docs/, which a reader pastes. A block with a language
// (```sh, ```ts, ...) is something to run or paste; one without is output shown for comparison.

export const projectRoot = join(import.meta.dirname, '..', '..')

export interface DocSnippet {
  // Relative to the project's root, as the reader sees it: README.md, docs/webhooks.md.
  readonly file: string
  // The line of the opening fence.
  readonly line: number
  // The fence's info string ('' for output).
  readonly language: string
  // The block's lines, without their fences and without the list indentation they may sit in.
  readonly text: string
}

export function docSnippets (): DocSnippet[] {
  const files = ['README.md', ...readdirSync(join(projectRoot, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)]
  return files.flatMap((file) => snippetsOf(file, readFileSync(join(projectRoot, file), 'utf8')))
}

function snippetsOf (file: string, markdown: string): DocSnippet[] {
  const snippets: DocSnippet[] = []
  const lines = markdown.split('\n')
  let open: { line: number, language: string, indent: number, body: string[] } | undefined
  lines.forEach((text, index) => {
    const fence = /^( *)```(\S*)\s*$/.exec(text)
    if (open === undefined) {
      if (fence !== null) open = { line: index + 1, language: fence[2]!, indent: fence[1]!.length, body: [] }
      return
    }
    if (fence !== null && fence[2] === '') {
      snippets.push({ file, line: open.line, language: open.language, text: open.body.join('\n') })
      open = undefined
      return
    }
    open.body.push(text.slice(Math.min(open.indent, /^ */.exec(text)![0].length)))
  })
  if (open !== undefined) throw new Error(`${file}:${open.line}: a code block is never closed`)
  return snippets
}

// A shell block as commands, each with the comment lines that follow it (what it answers, as the
// reader should see it). Lines ending in a backslash continue the command.
export interface ShellCommand {
  readonly command: string
  readonly expected: string[]
}

export function shellCommands (text: string): ShellCommand[] {
  const commands: Array<{ command: string, expected: string[] }> = []
  let continuing = false
  for (const line of text.split('\n')) {
    if (continuing) {
      commands.at(-1)!.command += `\n${line}`
    } else if (/^\s*#/.test(line)) {
      const last = commands.at(-1)
      if (last === undefined) throw new Error(`a comment before any command: ${line}`)
      last.expected.push(line.replace(/^\s*# ?/, ''))
    } else if (line.trim() !== '') {
      commands.push({ command: line, expected: [] })
    }
    continuing = line.endsWith('\\')
  }
  return commands
}
