export * from './reasoning-apart';
export * from './reasoning-rules';
