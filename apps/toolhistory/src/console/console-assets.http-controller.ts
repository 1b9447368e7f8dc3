import { Controller, Get, HttpStatus, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findProjectFile } from '../find-project-file';

/**
 * Only the console's own code may run on its page, and it only talks to
 * this origin; no framing, no referrer. Charts draw on a canvas and set
 * sizes through the CSSOM, which style-src does not restrict.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/** Built asset names: Vite's `name-hash.ext`, nothing that could climb out of the folder. */
const ASSET_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.(js|css|svg|woff2)$/;

/**
 * GET /console: the audit console's page and its built assets (`npm run
 * build` puts them in dist/console). They hold code, not data, and need no
 * token; the page asks the API for data with the token it is given.
 */
@Controller('console')
export class ConsoleAssetsHttpController {
  private folder: string | undefined;

  @Get()
  page(@Res() response: Response): void {
    const folder = this.builtFolder();
    if (!folder) {
      response.status(HttpStatus.NOT_FOUND).type('text/plain').send('the console is not built: run npm run build\n');
      return;
    }
    response.sendFile(join(folder, 'index.html'), { headers: { ...SECURITY_HEADERS, 'Cache-Control': 'no-cache' } });
  }

  @Get('assets/:file')
  asset(@Param('file') file: string, @Res() response: Response): void {
    const folder = this.builtFolder();
    const path = folder && ASSET_NAME.test(file) ? join(folder, 'assets', file) : undefined;
    if (!path || !existsSync(path)) {
      response.status(HttpStatus.NOT_FOUND).type('text/plain').send('not found\n');
      return;
    }
    // Names carry a content hash: a changed file is a new name.
    response.sendFile(path, { headers: { ...SECURITY_HEADERS, 'Cache-Control': 'public, max-age=31536000, immutable' } });
  }

  private builtFolder(): string | undefined {
    if (this.folder) return this.folder;
    try {
      this.folder = join(findProjectFile('dist/console/index.html', __dirname), '..');
    } catch {
      return undefined;
    }
    return this.folder;
  }
}
