// ESLint with typescript-eslint's type-aware rules (they read the types tsc sees, through the
// project service): floating promises, unsafe `any`, misused promises and the rest of
// recommendedTypeChecked, at zero warnings in `npm test`.
import js from '@eslint/js';
import graphql from '@graphql-eslint/eslint-plugin';
import tseslint from 'typescript-eslint';

/** Names that Apollo Federation's specs define in every SDL (`link__Purpose`, `join__Graph`, `_Any`). */
const FEDERATION_NAME =
  '^(link__|join__|federation__|_)|^(link|key|external|requires|provides|shareable|tag|extends|inaccessible|override|composeDirective|interfaceObject|authenticated|requiresScopes|policy|context|fromContext|cost|listSize)$';

const CODE = ['**/*.ts', '**/*.tsx', '**/*.js', '**/*.mjs', '**/*.cjs'];

/**
 * Each subgraph's SDL and the supergraph, as `npm run schema` prints them: each file is its own schema
 * (a subgraph is checked against its own types, the supergraph against the composed ones).
 */
const GRAPHQL_PROJECTS = Object.fromEntries(
  ['social', 'surveys', 'contacts', 'supergraph'].map((name) => [name, { schema: `schema/${name}.graphql` }]),
);

export default tseslint.config(
  // Generated files are GraphQL Code Generator's output, checked against it by test/operations.test.ts.
  { ignores: ['dist/', 'node_modules/', '.data/', '.tools/', 'schema/openapi/', '**/*.generated.ts'] },
  { files: CODE, extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked] },
  {
    files: CODE,
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
  {
    // The graph's conventions (docs/graph.md): naming, descriptions, Relay connections, input names.
    files: ['schema/*.graphql'],
    languageOptions: { parser: graphql.parser, parserOptions: { graphQLConfig: { projects: GRAPHQL_PROJECTS } } },
    plugins: { '@graphql-eslint': graphql },
    rules: {
      ...graphql.configs['flat/schema-recommended'].rules,
      ...graphql.configs['flat/schema-relay'].rules,
      '@graphql-eslint/naming-convention': [
        'error',
        {
          ...graphql.configs['flat/schema-recommended'].rules['@graphql-eslint/naming-convention'][1],
          // Federation's own definitions (`link__Purpose`, `@join__field`, `_service`) are named by its spec.
          types: { style: 'PascalCase', ignorePattern: FEDERATION_NAME },
          DirectiveDefinition: { style: 'camelCase', ignorePattern: FEDERATION_NAME },
          allowLeadingUnderscore: true,
          // What a mutation takes is a `...Input`; what a query or mutation answers never is.
          InputObjectTypeDefinition: { style: 'PascalCase', requiredSuffixes: ['Input'] },
          'ObjectTypeDefinition,ObjectTypeExtension': {
            forbiddenPrefixes: ['Type'],
            forbiddenSuffixes: ['Type', 'Input'],
          },
        },
      ],
      // Every type, field and argument of ours says what it is for; federation's definitions are its spec's.
      '@graphql-eslint/require-description': [
        'error',
        { types: true, rootField: true, ignoredSelectors: [`[name.value=/${FEDERATION_NAME}/]`] },
      ],
      // The SDLs carry federation's definitions whether or not a field uses them; type-graphql prints
      // only what the resolvers reach, so an unreachable type of ours cannot arise.
      '@graphql-eslint/no-unreachable-types': 'off',
      // Pages, rollups, payloads and the viewer are values without an identity of their own.
      '@graphql-eslint/strict-id-in-types': 'off',
      // Connections also offer `nodes` (GitHub's shortcut), and REST's pages list their items: a list
      // need not wrap edges. No `Node` interface: ids are per type, not Relay global ids.
      '@graphql-eslint/relay-edge-types': ['error', { listTypeCanWrapOnlyEdgeType: false, shouldImplementNode: false }],
      // Every connection pages both ways: `first`/`after` and `last`/`before`.
      '@graphql-eslint/relay-arguments': ['error', { includeBoth: true }],
      // Mutations take ids and a few scalars beside one `input`; a single `input` argument per mutation
      // would break every client. Input names are held by naming-convention (`...Input`) instead.
      '@graphql-eslint/input-name': 'off',
    },
  },
);
