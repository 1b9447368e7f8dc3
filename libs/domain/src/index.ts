export * from './projection';
export * from './ports';
