/**
 * Test tiers by file name: *.spec.ts (unit, pure logic), *.int-spec.ts
 * (integration, real Kafka and PostgreSQL), *.e2e-spec.ts (through the
 * service's public interfaces, as a separate process).
 */
const base = {
  testEnvironment: 'node',
  rootDir: __dirname,
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }],
    // jose ships ES modules only; jest's CommonJS runtime needs them compiled.
    '^.+/node_modules/jose/.+\\.js$': '<rootDir>/test/support/esm-package-transformer.js',
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
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
