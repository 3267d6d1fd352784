// Jest 30 runs the TypeScript sources as native ES modules (MikroORM 7 is ESM-only).
// SWC strips types and, unlike esbuild, emits the decorator metadata that type-graphql
// and MikroORM's ReflectMetadataProvider read.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
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
};
