// The gRPC contract's TypeScript types, generated from proto/toolhistory/v1/toolhistory.proto (npm run proto:generate).
export * from './generated/toolhistory/v1/toolhistory';
export type { Timestamp } from './generated/google/protobuf/timestamp';
