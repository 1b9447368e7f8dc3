import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`, done by .ci/run); another build can be named here. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Kept as CI artefacts, in the repository's ignored output folder. */
const SCREENSHOTS = join(__dirname, '..', '..', 'output', 'console');

/** Headless Chromium for the console's browser tests; fails at once, saying how to get it, when it is missing. */
export async function launchConsoleBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`);
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Saves the whole page as output/console/<name>.png and checks it is a real picture, not an empty file. */
export async function consoleScreenshot(page: Page, name: string): Promise<void> {
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  const bytes = statSync(path).size;
  // Plain throw, not expect: this file is also compiled by the service build, which has no jest types.
  if (bytes <= 10_000) throw new Error(`screenshot ${name}.png is ${bytes} bytes: the page did not render`);
}
