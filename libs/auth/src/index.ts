export * from './jwt-caller-authenticator';
export * from './jwks-file';
export * from './jwks-url';
export * from './key-source';
