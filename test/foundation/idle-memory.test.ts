import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { idleCompactor, type ProcessProbe } from '../../src/compose/idle-memory.js';

const MB = 1024 * 1024;

/**
 * A process whose RSS and event-loop utilization the test sets; a collection is counted (its freed
 * pages go back to the system later, as in V8: the test lowers the RSS when it says so).
 */
function fakeProcess(start: { rss: number; utilization: number }) {
  const state = { ...start, requests: 0, collections: 0, youngAtSmallest: false };
  const probe: ProcessProbe = {
    rss: () => state.rss,
    utilization: () => state.utilization,
    requests: () => state.requests,
    youngAtSmallest: () => state.youngAtSmallest,
    collect: () => {
      state.collections += 1;
    },
  };
  return { state, probe };
}

describe('the idle compactor', () => {
  const options = { everyMs: 1_000, quietMs: 3_000, busyBelow: 0.2, growth: 8 * MB };

  it('compacts once quiet for long enough, then only after the process grew again over its lowest', () => {
    const { state, probe } = fakeProcess({ rss: 136 * MB, utilization: 0.01 });
    let compactions = 0;
    const compactor = idleCompactor(probe, { ...options, onCompaction: () => compactions++ });
    // Two quiet seconds are not enough; the third is.
    expect([compactor.look(), compactor.look(), compactor.look()]).toEqual([false, false, true]);
    expect(state.collections).toBe(1);
    // It goes on collecting, one a second, until V8 has shrunk its young generation.
    expect([compactor.look(), compactor.look()]).toEqual([true, true]);
    state.youngAtSmallest = true;
    expect(compactor.look()).toBe(false);
    expect(state.collections).toBe(3);
    // The freed pages go back to the system a moment after: the lowest RSS counts.
    state.rss = 100 * MB;
    expect([compactor.look(), compactor.look(), compactor.look()]).toEqual([false, false, false]);
    // Quiet long enough again, but grown by less than the margin over that lowest.
    state.rss = 107 * MB;
    expect([compactor.look(), compactor.look()]).toEqual([false, false]);
    expect(state.collections).toBe(3);
    state.rss = 109 * MB;
    state.youngAtSmallest = false;
    expect(compactor.look()).toBe(true);
    expect(state.collections).toBe(4);
    expect(compactions).toBe(2);
  });

  it('by default compacts after two quiet seconds, so that V8 can shrink within 10 s of a burst', () => {
    const { state, probe } = fakeProcess({ rss: 150 * MB, utilization: 0.01 });
    const compactor = idleCompactor(probe);
    expect([compactor.look(), compactor.look()]).toEqual([false, true]);
    expect(state.collections).toBe(1);
  });

  it('runs at most maxCollections in one compaction', () => {
    const { state, probe } = fakeProcess({ rss: 136 * MB, utilization: 0.01 });
    const compactor = idleCompactor(probe, { ...options, maxCollections: 4 });
    const looks = Array.from({ length: 10 }, () => compactor.look());
    expect(looks).toEqual([false, false, true, true, true, true, false, false, false, false]);
    expect(state.collections).toBe(4);
  });

  it('stops the compaction when work comes in', () => {
    const { state, probe } = fakeProcess({ rss: 136 * MB, utilization: 0.01 });
    const compactor = idleCompactor(probe, options);
    expect([compactor.look(), compactor.look(), compactor.look()]).toEqual([false, false, true]);
    state.requests += 1;
    expect(compactor.look()).toBe(false);
    expect(state.collections).toBe(1);
    // Quiet again: the young generation was not given back yet, so the next quiet spell goes on.
    expect([compactor.look(), compactor.look(), compactor.look()]).toEqual([false, false, true]);
    expect(state.collections).toBe(2);
    // Once it is at its smallest, a compaction interrupted waits for growth, as a finished one.
    state.youngAtSmallest = true;
    state.requests += 1;
    expect(compactor.look()).toBe(false);
    expect([compactor.look(), compactor.look(), compactor.look(), compactor.look()]).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(state.collections).toBe(2);
  });

  it('never collects until the event loop has been quiet for the whole spell', () => {
    const { state, probe } = fakeProcess({ rss: 150 * MB, utilization: 0.4 });
    const compactor = idleCompactor(probe, options);
    const looks = (n: number) => Array.from({ length: n }, () => compactor.look());
    expect(looks(5)).toEqual([false, false, false, false, false]);
    state.utilization = 0.01;
    expect(looks(2)).toEqual([false, false]);
    // One busy second (a batch of renewals) starts the spell again.
    state.utilization = 0.2;
    expect(looks(1)).toEqual([false]);
    state.utilization = 0.01;
    expect(looks(3)).toEqual([false, false, true]);
    expect(state.collections).toBe(1);
  });

  it('never collects until the server has answered no request for the whole spell', () => {
    const { state, probe } = fakeProcess({ rss: 150 * MB, utilization: 0.01 });
    const compactor = idleCompactor(probe, options);
    const looks = (n: number) => Array.from({ length: n }, () => compactor.look());
    // One light request a second: the loop is nearly idle, but the server is in use.
    for (let second = 0; second < 5; second++) {
      state.requests += 1;
      expect(compactor.look()).toBe(false);
    }
    expect(looks(2)).toEqual([false, false]);
    state.requests += 1;
    expect(looks(4)).toEqual([false, false, false, true]);
    expect(state.collections).toBe(1);
  });

  it('does nothing, and starts no timer, when V8 does not expose gc', () => {
    const { state, probe } = fakeProcess({ rss: 150 * MB, utilization: 0 });
    const compactor = idleCompactor({ ...probe, collect: undefined }, options);
    expect([compactor.look(), compactor.look(), compactor.look(), compactor.look()]).toEqual([
      false,
      false,
      false,
      false,
    ]);
    const stop = compactor.start();
    stop();
    expect(state.collections).toBe(0);
  });

  it('gives memory back in a real process that start-up left garbage in', () => {
    // A child Node with --expose-gc: garbage left as start-up leaves it, then one look that counts
    // any loop as quiet (the loop's quietness is the cases above; here it is the collection).
    const script = `
      import { EventEmitter } from 'node:events';
      import { idleCompactor, processProbe } from ${JSON.stringify(join(import.meta.dirname, '../../src/compose/idle-memory.ts'))};
      const probe = processProbe(new EventEmitter());
      let collections = 0;
      const collect = probe.collect;
      probe.collect = () => { collections += 1; collect(); };
      let keep = [];
      for (let i = 0; i < 400_000; i++) keep.push({ i, text: 'x'.repeat(40) + i });
      // Moved to the old generation (two young collections survived), where only a full one frees it.
      gc({ type: 'minor' });
      gc({ type: 'minor' });
      const alive = process.memoryUsage().heapUsed;
      keep = null;
      const did = idleCompactor(probe, { growth: 0, busyBelow: 2, quietMs: 0 }).look();
      const after = process.memoryUsage().heapUsed;
      process.stdout.write(JSON.stringify({ did, collections, alive, after }));
    `;
    const child = spawnSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script],
      {
        encoding: 'utf8',
      },
    );
    expect(child.stderr).toBe('');
    const result = JSON.parse(child.stdout) as {
      did: boolean;
      collections: number;
      alive: number;
      after: number;
    };
    expect(result).toMatchObject({ did: true, collections: 1 });
    // The 400,000 objects (tens of MB) were garbage: the heap in use after is a fraction of before.
    expect(result.after).toBeLessThan(result.alive / 2);
  });
});
