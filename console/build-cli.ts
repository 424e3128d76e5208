// `npm run build` (after tsc): bundles the console and prints the size of each asset.
import { buildConsole } from './build.js';

const built = await buildConsole();
for (const [name, size] of Object.entries(built.sizes)) {
  process.stdout.write(`console: ${name} ${(size.bytes / 1024).toFixed(1)} KiB (${(size.gzip / 1024).toFixed(1)} KiB gzipped)\n`);
}
