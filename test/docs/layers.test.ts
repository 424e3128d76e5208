// The layers of docs/architecture.md, as a check: every import in src/ points to the same layer
// or one below it. A new folder must be placed here (and in the drawing) before it can pass.
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Bottom first; a path's layer is the one of its longest matching prefix. */
const LAYERS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['domain', ['domain/', 'errors.ts']],
  ['config', ['config.ts', 'logger.ts', 'schemas/', 'hot-metrics.ts', 'metrics.ts']],
  ['store', ['store/']],
  ['policies and operations', ['auth/', 'gate/', 'saves/', 'boards/', 'admin/', 'erasure/']],
  ['HTTP adapters', ['http/', 'admin/http/', 'openapi/', 'console/']],
  ['apps', ['app.ts', 'ops/', 'cli/']],
  ['composition root', ['main.ts', 'server.ts', 'cluster.ts', 'dev/']],
];

function layerOf(path: string): number {
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach(([, prefixes], rank) => {
    for (const prefix of prefixes) {
      if ((path === prefix || path.startsWith(prefix)) && prefix.length > bestLength) {
        best = rank;
        bestLength = prefix.length;
      }
    }
  });
  return best;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

describe('layers (docs/architecture.md)', () => {
  const files = sources(SRC);

  it('places every source file in a layer', () => {
    expect(files.map((f) => relative(SRC, f)).filter((f) => layerOf(f) < 0)).to.deep.equal([]);
  });

  it('has no import that reaches up a layer', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = relative(SRC, file);
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
        const to = relative(SRC, resolve(dirname(file), m[1]!)).replace(/\.js$/, '.ts');
        if (to.startsWith('..')) continue;
        if (layerOf(to) > layerOf(from)) upward.push(`${from} (${LAYERS[layerOf(from)]![0]}) imports ${to} (${LAYERS[layerOf(to)]![0]})`);
      }
    }
    expect(upward).to.deep.equal([]);
  });
});
