import { stopTestDatabase } from './global-setup';

/** Runs after the integration and e2e tiers: stops the embedded database the setup started (nothing otherwise). */
export default async function globalTeardown(): Promise<void> {
  await stopTestDatabase();
}
