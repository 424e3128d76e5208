// Bundles the operator console (console/src) with esbuild into dist/console-web/: one script and
// one stylesheet named by their content hash under assets/, and index.html naming them. Run by
// `npm run build`; the browser tests call buildConsole() themselves. Prints the sizes.
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const root = dirname(fileURLToPath(import.meta.url));
export const OUT_DIR = join(root, '..', 'dist', 'console-web');

export interface BuiltConsole {
  readonly dir: string;
  /** Bytes of each asset, as sent and gzipped. */
  readonly sizes: Record<string, { bytes: number; gzip: number }>;
}

export async function buildConsole(outDir = OUT_DIR): Promise<BuiltConsole> {
  const assets = join(outDir, 'assets');
  await rm(outDir, { recursive: true, force: true });
  await mkdir(assets, { recursive: true });
  const result = await build({
    entryPoints: { app: join(root, 'src', 'main.ts') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022'],
    outdir: assets,
    entryNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const names = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const script = names.find((n) => n.endsWith('.js'));
  const style = names.find((n) => n.endsWith('.css'));
  if (!script || !style) throw new Error(`esbuild made ${names.join(', ')}: expected one .js and one .css`);
  await writeFile(join(outDir, 'index.html'), page(script, style));
  const sizes: BuiltConsole['sizes'] = {};
  for (const name of await readdir(assets)) {
    const file = join(assets, name);
    sizes[name] = { bytes: (await stat(file)).size, gzip: gzipSync(readFileSync(file)).length };
  }
  return { dir: outDir, sizes };
}

function page(script: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Operator console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/${style}">
<script type="module" src="/console/assets/${script}"></script>
</head>
<body>
<div id="app"><noscript>The operator console needs JavaScript.</noscript></div>
</body>
</html>
`;
}
