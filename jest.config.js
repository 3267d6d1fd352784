// Jest 30 runs the TypeScript sources as native ES modules (MikroORM 7 is ESM-only).
// SWC strips types and, unlike esbuild, emits the decorator metadata that type-graphql
// and MikroORM's ReflectMetadataProvider read.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // package.json's "imports" (#lib/...) name the compiled files under dist/; Jest runs the sources.
    '^#(lib|subgraphs|gateway|rest-adapters|scripts|test)/(.*)\\.js$': '<rootDir>/$1/$2',
  },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'es6' },
      },
    ],
  },
  // type-graphql and MikroORM read decorator metadata through this polyfill.
  setupFiles: ['reflect-metadata'],
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testTimeout: 60000,
  maxWorkers: 2,
  // Each test file imports the whole platform again into the worker's VM contexts, and a worker's heap
  // grows to 1.6 GB by the end of the suite. The embedded-PGlite suites, starting late in such a
  // worker, once took over a minute to start (most likely collecting garbage). A worker past 1 GB
  // after a file is replaced.
  workerIdleMemoryLimit: '1GB',
};
