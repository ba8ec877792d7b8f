import { cpus, loadavg } from 'node:os';
import type { Figures } from './load.js';
import type { Scenario } from './scenarios.js';

export interface Row extends Figures {
  /** The scenario, and the rate when the load was held at one. */
  label: string;
  /** req/s divided by the compared baseline's req/s (runs at full load only). */
  ratio: number | null;
}

export interface GoalCheck {
  scenario: string;
  goal: string;
  limit: number;
  value: number;
  met: boolean;
}

export interface Report {
  date: string;
  machine: {
    cpus: number;
    cpuModel: string;
    node: string;
    platform: string;
    /** 1-minute load average before and after: anything else running skews the figures. */
    loadAverage: { start: number; end: number };
  };
  settings: {
    connections: number;
    durationSec: number;
    warmupSec: number;
    latencyRate: number;
    shop: 'live' | 'test';
  };
  results: Row[];
  goals: GoalCheck[];
  skipped: { scenario: string; reason: string }[];
}

export const labelOf = (f: Pick<Figures, 'scenario' | 'rate' | 'pairedWith'>) =>
  `${f.rate === null ? f.scenario : `${f.scenario} @${f.rate}/s`}${f.pairedWith ? ` (for ${f.pairedWith})` : ''}`;

export function buildReport(
  scenarios: Scenario[],
  figures: Figures[],
  settings: Report['settings'],
  skipped: Report['skipped'],
  loadAtStart: number,
): Report {
  const full = figures.filter((f) => f.rate === null);
  // The baseline run made right before the scenario, else any full-load run of it.
  const baselineFor = (name: string, base: string) =>
    full.find((b) => b.scenario === base && b.pairedWith === name) ?? full.find((b) => b.scenario === base);
  const results: Row[] = [];
  const goals: GoalCheck[] = [];
  for (const f of figures) {
    const scenario = scenarios.find((s) => s.name === f.scenario);
    const base =
      f.rate === null && scenario?.compareWith ? baselineFor(f.scenario, scenario.compareWith) : undefined;
    const ratio = base && base.reqPerSec > 0 ? Math.round((f.reqPerSec / base.reqPerSec) * 100) / 100 : null;
    results.push({ ...f, label: labelOf(f), ratio });
    const g = scenario?.goals;
    if (g?.minRatio !== undefined && ratio !== null) {
      goals.push({
        scenario: f.scenario,
        goal: 'req/s ratio to baseline ≥',
        limit: g.minRatio,
        value: ratio,
        met: ratio >= g.minRatio,
      });
    }
    if (g?.maxP99Ms !== undefined) {
      const load = f.rate === null ? `${settings.connections} connections at full load` : `${f.rate} req/s`;
      goals.push({
        scenario: f.scenario,
        goal: `p99 ms at ${load} ≤`,
        limit: g.maxP99Ms,
        value: f.p99Ms,
        met: f.p99Ms <= g.maxP99Ms,
      });
    }
  }
  const cpu = cpus();
  return {
    date: new Date().toISOString(),
    machine: {
      cpus: cpu.length,
      cpuModel: cpu[0]?.model ?? 'unknown',
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      loadAverage: { start: loadAtStart, end: Math.round((loadavg()[0] ?? 0) * 100) / 100 },
    },
    settings,
    results,
    goals,
    skipped,
  };
}

export function formatTable(report: Report): string {
  const header = [
    'scenario',
    'req/s',
    'p50 ms',
    'p99 ms',
    'errors/non-2xx',
    'ratio to baseline',
    'server CPU ms/req',
    'PostgreSQL CPU ms/req',
  ];
  const rows = report.results.map((r) => [
    r.label,
    String(r.reqPerSec),
    String(r.p50Ms),
    String(r.p99Ms),
    `${r.errors}/${r.non2xx}`,
    r.ratio === null ? '-' : r.ratio.toFixed(2),
    r.serverCpuMsPerReq === null ? '-' : r.serverCpuMsPerReq.toFixed(3),
    r.databaseCpuMsPerReq === null ? '-' : r.databaseCpuMsPerReq.toFixed(3),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

export function formatGoals(report: Report): string {
  return report.goals
    .map((g) => `${g.met ? 'MET   ' : 'MISSED'}  ${g.scenario}: ${g.goal} ${g.limit} (measured ${g.value})`)
    .join('\n');
}

/** Runs where most answers were not 2xx: their figures measure errors, not the feature. */
export function brokenRuns(report: Report): string[] {
  return report.results
    .filter((r) => r.requests === 0 || r.requests - r.non2xx < (r.requests + r.errors) / 2)
    .map((r) => {
      const codes = Object.entries(r.statusCodes)
        .map(([code, n]) => `${code}×${n}`)
        .join(', ');
      return `${r.label}: ${r.requests - r.non2xx} of ${r.requests} answers were 2xx, ${r.errors} connection errors (${codes || 'no answers'})`;
    });
}
