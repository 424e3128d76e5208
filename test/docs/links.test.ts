// Every relative link of the README and docs/*.md points at a file that exists, and every
// #anchor into a Markdown page at one of its headings (GitHub's slugs). Only the pages other
// branches add may be missing for now: the README's docs index names them ahead of time.
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAY_BE_MISSING = new Set(['docs/history.md', 'docs/backups.md', 'docs/migration.md', 'docs/deployment.md', 'docs/testing.md']);
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The anchors GitHub gives a page's headings. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

function linksOf(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

describe('links of the README and docs/', () => {
  for (const page of PAGES) {
    it(`${page}: every relative link and anchor resolves`, () => {
      const text = readFileSync(join(ROOT, page), 'utf8');
      const broken: string[] = [];
      for (const link of linksOf(text)) {
        if (/^[a-z]+:/.test(link)) continue;
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), path);
        const name = relative(ROOT, target);
        if (!existsSync(target)) {
          if (!MAY_BE_MISSING.has(name)) broken.push(link);
          continue;
        }
        if (anchor && name.endsWith('.md') && statSync(target).isFile()) {
          if (!anchorsOf(readFileSync(target, 'utf8')).has(anchor)) broken.push(link);
        }
      }
      expect(broken).to.deep.equal([]);
    });
  }
});
