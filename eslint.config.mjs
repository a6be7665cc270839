// The linter: what catches real defects, not style (Prettier formats). The type-aware rules run
// on the TypeScript files: a promise nobody awaits or handles in a daemon is an unhandled
// rejection (Node ends the process) or an error nobody sees; a promise passed where a callback's
// result is ignored, or an await of a non-promise, is a bug of the same kind.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'src/generated/**', '.cache/**', '.tap/**', 'bench/out/**'] },
  {
    files: ['**/*.{ts,mts,mjs,cjs}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      // tsc (noUnusedLocals, noUnusedParameters) reports these.
      '@typescript-eslint/no-unused-vars': 'off',
      // Test doubles and JSON handling use `any` on purpose; tsc's strict mode guards the rest.
      '@typescript-eslint/no-explicit-any': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
      // Style, or deliberate here: regexes that match control bytes and literal runs of spaces,
      // escapes kept for readability, and require() where a module loads lazily or is CommonJS.
      'no-control-regex': 'off',
      'no-regex-spaces': 'off',
      'no-useless-escape': 'off',
      'prefer-const': 'off',
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // tap runs a subtest whether or not its promise is awaited (t.test, t.todo, t.skip).
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafePromises: [{ from: 'package', name: 'PromiseWithSubtest', package: '@tapjs/core' }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-for-in-array': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' } },
  },
);
