// ESLint with typescript-eslint's type-aware rules (they read the types tsc sees, through the
// project service): floating promises, unsafe `any`, misused promises and the rest of
// recommendedTypeChecked, at zero warnings in `npm test`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Generated files are GraphQL Code Generator's output, checked against it by test/operations.test.ts.
  { ignores: ['dist/', 'node_modules/', '.data/', '.tools/', 'schema/', '**/*.generated.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Unused names are mistakes; a leading underscore marks one that a signature needs.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // `async` marks a function that answers a promise (an interface's method, a callback that may
      // wait): whatever it throws becomes a rejection, which is what its callers handle. Removing
      // `async` where nothing is awaited yet would turn those rejections into synchronous throws.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests read JSON answers whose shape is what they assert: the answer is `any` on purpose, and
    // an assertion that does not hold is the failure. Every other rule applies to tests as well.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Hive Gateway's configuration is type-checked on its own (tsconfig.hive.json): its types pull in
    // the DOM library, which must not leak into the platform's code.
    files: ['gateway.config.ts'],
    languageOptions: {
      parserOptions: { projectService: false, project: './tsconfig.hive.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // Plain JavaScript (configuration files, the lockfile script) has no types to check against.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { console: 'readonly', process: 'readonly', URL: 'readonly' } },
  },
);
