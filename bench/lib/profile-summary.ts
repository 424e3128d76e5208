// Reads a V8 .cpuprofile and sums self time by function and by module (our src/, each npm
// package, node internals), to see where a request's CPU goes.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export interface ProfileSummary {
  readonly totalMs: number;
  /** The share of samples in which the process was busy (not idle). */
  readonly busyPercent: number;
  readonly byModule: Array<{ module: string; percent: number }>;
  readonly byFunction: Array<{ fn: string; percent: number }>;
}

function moduleOf(url: string, fn: string): string {
  if (url === '') return fn.startsWith('(') ? fn : '(native)';
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const src = /\/(dist|src)\/(.*)$/.exec(url);
  return src ? `service:${src[2]}` : url;
}

export function summarize(file: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; startTime: number; endTime: number };
  const totalHits = profile.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0);
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const mod = moduleOf(url, functionName);
    byModule.set(mod, (byModule.get(mod) ?? 0) + hits);
    const fn = `${functionName || '(anonymous)'} ${mod}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + hits);
  }
  const pct = (hits: number) => Math.round((hits / totalHits) * 1000) / 10;
  const idle = byModule.get('(idle)') ?? 0;
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
  return {
    totalMs: (profile.endTime - profile.startTime) / 1000,
    busyPercent: pct(totalHits - idle),
    byModule: sorted(byModule).map(([module, hits]) => ({ module, percent: pct(hits) })),
    byFunction: sorted(byFunction).map(([fn, hits]) => ({ fn, percent: pct(hits) })),
  };
}
