import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AVS_TEST_DATA, CVC_TEST_DATA, TEST_CARDS } from '../../src/gateway/test-cards.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const readme = read('README.md');
/** The documentation pages under docs/, by their path from the root. */
const pages = readdirSync(join(root, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);
/** The README and every page: what a reader can find. */
const documented = [readme, ...pages.map(read)].join('\n');

/** The headings of a markdown text outside code blocks, with their level. */
function headings(markdown: string): { level: number; text: string }[] {
  const out: { level: number; text: string }[] = [];
  let inCode = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inCode = !inCode;
    const m = /^(#{1,6}) (.+)$/.exec(line);
    if (!inCode && m) out.push({ level: (m[1] as string).length, text: (m[2] as string).trim() });
  }
  return out;
}

/** The anchor GitHub gives a heading. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

describe('README and docs', () => {
  it('lists every sandbox test card', () => {
    const missing = TEST_CARDS.filter((c) => !documented.includes(`\`${c.number}\``)).map((c) => c.number);
    expect(missing).toEqual([]);
  });

  it('lists every CVC test value', () => {
    const missing = CVC_TEST_DATA.filter((c) => !documented.includes(`\`${c.cvc}\``)).map((c) => c.cvc);
    expect(missing).toEqual([]);
  });

  it('names every AVS code the sandbox answers', () => {
    const at = documented.indexOf('AVS/CVC test data');
    expect(at).toBeGreaterThan(0);
    const section = documented.slice(at);
    const missing = AVS_TEST_DATA.filter(
      (a) => !section.includes(`${a.addressDigit}/${a.zipDigit} \`${a.code}\``),
    );
    expect(missing).toEqual([]);
  });

  it('documents every configuration variable the service reads', () => {
    const source = read('src/config.ts');
    const names = [...source.matchAll(/value\('([A-Z_]+)'\)|int\('([A-Z_]+)'|url\('([A-Z_]+)'/g)].map(
      (m) => m[1] ?? m[2] ?? m[3],
    );
    expect(names.length).toBeGreaterThan(8);
    const missing = [...new Set(names)].filter((n) => !documented.includes(`\`${n}\``));
    expect(missing).toEqual([]);
  });

  it('keeps the README short, starting with the two commands', () => {
    expect(readme.split('\n').length).toBeLessThan(300);
    const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => (m[1] ?? '').trim());
    expect(blocks.slice(0, 2)).toEqual(['npm install && npm start', 'npm test']);
  });

  it('has the pages the README maps', () => {
    for (const page of ['api', 'notifications', 'operations', 'testing', 'architecture']) {
      expect(pages).toContain(`docs/${page}.md`);
      expect(readme).toContain(`](docs/${page}.md)`);
    }
  });

  it('opens every page with a table of contents of its sections', () => {
    for (const page of pages) {
      const text = read(page);
      const sections = headings(text).filter((h) => h.level >= 2 && h.text !== 'Contents');
      const contents = text.indexOf('\n## Contents\n');
      expect(contents, `${page} has "## Contents"`).toBeGreaterThan(0);
      expect(contents, `${page}: the contents come before the first section`).toBeLessThan(
        text.indexOf(`\n## ${sections.find((s) => s.level === 2)?.text}\n`),
      );
      const missing = sections.filter((s) => !text.includes(`(#${anchor(s.text)})`)).map((s) => s.text);
      expect(missing, page).toEqual([]);
    }
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of ['README.md', 'ARCHITECTURE.md', ...pages]) {
      const text = read(file).replace(/^```[\s\S]*?^```$/gm, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/.test(target)) continue;
        const [path, hash] = target.split('#');
        const to = path ? relative(root, resolve(dirname(join(root, file)), path)) : file;
        if (!existsSync(join(root, to))) {
          broken.push(`${file}: ${target} (no file ${to})`);
          continue;
        }
        if (hash && !headings(read(to)).some((h) => anchor(h.text) === hash)) {
          broken.push(`${file}: ${target} (no heading #${hash} in ${to})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('no longer says the hosted checkout page is not built', () => {
    expect(documented).not.toMatch(/checkout page is not built/i);
  });
});
