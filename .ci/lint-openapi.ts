// Lints both OpenAPI documents the service serves (the public one and the ops listener's) with
// Redocly's recommended rules (redocly.yaml): writes each to a temporary file, runs
// `redocly lint`, and fails on any error. npm run lint:openapi; .ci/run calls it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../src/openapi/document.js';

const dir = mkdtempSync(join(tmpdir(), 'pds-openapi-'));
let failed = false;
try {
  for (const audience of ['public', 'ops'] as const) {
    const file = join(dir, `${audience}.json`);
    writeFileSync(file, JSON.stringify(buildOpenApiDocument(audience), null, 2));
    const result = spawnSync('node_modules/.bin/redocly', ['lint', '--config', 'redocly.yaml', '--format', 'stylish', file], {
      stdio: 'inherit',
    });
    if (result.status !== 0) failed = true;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failed) {
  process.stderr.write('lint:openapi: the OpenAPI document has errors (above)\n');
  process.exit(1);
}
process.stdout.write('lint:openapi: both OpenAPI documents ok\n');
