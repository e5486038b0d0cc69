import js from '@eslint/js'
import neostandard from 'neostandard'
import tseslint from 'typescript-eslint'

// neostandard is the formatter: its style rules (spacing, quotes, no semicolons, trailing
// commas where a list spans lines) are errors, and `npx eslint --fix .` applies them.
export default tseslint.config(
  { ignores: ['dist/', 'generated/', 'node_modules/', '.tap/', 'sdk/', '.tools/', 'test-artifacts/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...neostandard({ ts: true, noJsx: true }),
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: 'error',
      // `void promise` marks a promise deliberately not awaited (its errors are handled inside).
      'no-void': ['error', { allowAsStatement: true }],
      // A const and a type of one name (ErrorCode, Database) is TypeScript's enum-like idiom; the
      // compiler itself refuses any real redeclaration.
      '@typescript-eslint/no-redeclare': 'off',
      'no-console': 'error',
      'no-restricted-imports': ['error', {
        paths: ['better-sqlite3', 'better-sqlite3-node20'].map((name) => ({
          name,
          message: 'Import Database from src/store/sqlite/sqlite-driver.ts, which picks the build for this Node version.',
          allowTypeImports: true,
        })),
      }],
    },
  }
  // No line cap: a file holds one concept whole, however long (a cap cut files by size, and a
  // reader opened several to follow one idea). The house's imports (no circle, no import back up
  // a layer) are checked by dependency-cruiser (.dependency-cruiser.cjs), in the same npm run lint.
)
