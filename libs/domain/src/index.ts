export * from './projection';
export * from './ports';
export * from './replay';
export * from './redaction';
export * from './policy';
export * from './audit';
export * from './subscription';
export * from './access';
