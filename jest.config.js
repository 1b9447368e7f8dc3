/**
 * Test tiers by file name: *.spec.ts (unit, pure logic), *.int-spec.ts
 * (integration, real Kafka and PostgreSQL), *.e2e-spec.ts (through the
 * service's public interfaces, as a separate process).
 */
const ES_MODULE_PACKAGES = '(jose|ai|@ai-sdk/[^/]+|@workflow/[^/]+|zod)';

const base = {
  testEnvironment: 'node',
  rootDir: __dirname,
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }],
    // ES modules that jest's CommonJS runtime cannot load: jose's, AI SDK 7's (ai, @ai-sdk/*, @workflow/*; it requires zod's
    // locales as zod's ES modules). Compiled to CommonJS; .cjs files are left alone, a CommonJS .js file comes out as it was.
    [`^.+/node_modules/${ES_MODULE_PACKAGES}/.+\\.js$`]: '<rootDir>/test/support/esm-package-transformer.js',
  },
  transformIgnorePatterns: [`/node_modules/(?!${ES_MODULE_PACKAGES}/)`],
  moduleNameMapper: { '^@toolhistory/(.*)$': '<rootDir>/libs/$1/src' },
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};

const withServices = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/test/support/service-tier-setup.ts'],
};

module.exports = {
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,test}/**/*.spec.ts'] },
    { ...base, ...withServices, displayName: 'integration', testMatch: ['<rootDir>/{apps,libs,test}/**/*.int-spec.ts'] },
    { ...base, ...withServices, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
  ],
};
