/**
 * Where a V8 CPU profile's time went (`node --cpu-prof`), as text: self time by area (a package of
 * node_modules, a folder of src/, Node's internals, the garbage collector) and by function, and the
 * total time under Kopek's own functions. `npx tsx bench/cpuprofile.ts <file.cpuprofile> [from to]`,
 * or summarizeProfile() from a benchmark; `from`/`to` (microseconds on the profile's clock, that of
 * process.hrtime) keep only the samples of a run.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  byArea: { area: string; ms: number; share: number }[];
  bySelf: { fn: string; ms: number; share: number }[];
  /** Kopek's functions (src/) by the time spent in them and everything they called. */
  byTotal: { fn: string; ms: number; share: number }[];
  text: string;
}

function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'garbage collector';
    if (functionName === '(idle)') return 'idle (waiting for PostgreSQL)';
    if (functionName === '(program)') return 'V8 and native code outside JS';
    return `native: ${functionName || '(anonymous)'}`;
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `node_modules/${pkg[1]}`;
  const src = /\/(src|bench)\/((?:[^/]+\/)?)/.exec(url);
  if (src) return `${src[1]}/${src[2]?.replace(/\/$/, '') || '(top)'}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return url;
}

/**
 * A function's name and file; the line only in plain JavaScript (node_modules, Node's own): tsx
 * compiles TypeScript without keeping its lines, so a profile's line there is not the source's.
 */
function nameOf(frame: CallFrame): string {
  const { url } = frame;
  const path = url.replace(/^.*\/(node_modules|src|bench)\//, '$1/');
  const line = /\.ts$/.test(url) ? '' : `:${frame.lineNumber + 1}`;
  return `${frame.functionName || '(anonymous)'}${url ? ` ${path}${line}` : ''}`;
}

const share = (ms: number, total: number) => Math.round((ms / total) * 1000) / 10;

/** Summarizes one or more profiles (the processes of one run) together. */
export function summarizeProfile(
  files: string | string[],
  window?: { from: number; to: number }[],
): ProfileSummary {
  const list = Array.isArray(files) ? files : [files];
  const self = new Map<string, number>();
  const area = new Map<string, number>();
  const total = new Map<string, number>();
  let totalUs = 0;
  list.forEach((file, index) => {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const range = window?.[index];
    let at = profile.startTime;
    profile.samples.forEach((id, i) => {
      const dt = profile.timeDeltas[i + 1] ?? 0;
      at += profile.timeDeltas[i] ?? 0;
      if (range && (at < range.from || at > range.to)) return;
      const node = byId.get(id);
      if (!node) return;
      totalUs += dt;
      const name = nameOf(node.callFrame);
      self.set(name, (self.get(name) ?? 0) + dt);
      const a = areaOf(node.callFrame);
      area.set(a, (area.get(a) ?? 0) + dt);
      // Each of Kopek's functions on the stack once, however deep it recurs.
      const seen = new Set<string>();
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const frame = byId.get(cur)?.callFrame;
        if (!frame || !/\/src\//.test(frame.url)) continue;
        const fn = nameOf(frame);
        if (seen.has(fn)) continue;
        seen.add(fn);
        total.set(fn, (total.get(fn) ?? 0) + dt);
      }
    });
  });
  const totalMs = totalUs / 1000;
  const top = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([key, us]) => ({ key, ms: Math.round(us / 100) / 10, share: share(us / 1000, totalMs) }));
  const byArea = top(area, 15).map(({ key, ms, share }) => ({ area: key, ms, share }));
  const bySelf = top(self, 25).map(({ key, ms, share }) => ({ fn: key, ms, share }));
  const byTotal = top(total, 25).map(({ key, ms, share }) => ({ fn: key, ms, share }));
  const rows = (r: { ms: number; share: number }[], label: (i: number) => string) =>
    r.map((x, i) => `  ${x.share.toFixed(1).padStart(5)} %  ${x.ms.toFixed(0).padStart(7)} ms  ${label(i)}`);
  const text = [
    `${Math.round(totalMs)} ms of samples in ${list.map((f) => basename(f)).join(', ')}`,
    'By area (self time):',
    ...rows(byArea, (i) => byArea[i]?.area ?? ''),
    'By function (self time):',
    ...rows(bySelf, (i) => bySelf[i]?.fn ?? ''),
    "Kopek's functions (total time, callees included):",
    ...rows(byTotal, (i) => byTotal[i]?.fn ?? ''),
  ].join('\n');
  return {
    file: list.map((f) => basename(f)).join(', '),
    totalMs: Math.round(totalMs),
    byArea,
    bySelf,
    byTotal,
    text,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, from, to] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npx tsx bench/cpuprofile.ts <file.cpuprofile> [fromUs toUs]');
    process.exit(2);
  }
  const window = from && to ? [{ from: Number(from), to: Number(to) }] : undefined;
  console.log(summarizeProfile(file, window).text);
}
