import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'generated/', 'node_modules/', '.tap/', 'sdk/', '.tools/', 'test-artifacts/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: 'error',
      'no-console': 'error',
      'no-restricted-imports': ['error', {
        paths: ['better-sqlite3', 'better-sqlite3-node20'].map((name) => ({
          name,
          message: 'Import Database from src/store/sqlite/sqlite-driver.ts, which picks the build for this Node version.',
          allowTypeImports: true,
        })),
      }],
    },
  },
)
