export * from './aes-gcm';
export * from './file-keyring';
export * from './envelope-vault';
export * from './file-data-key-store';
export * from './keyring-check';
export * from './rotate-data-keys';
