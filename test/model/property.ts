import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, it, vi } from 'vitest';
import { type Harness, harness, withClock } from '../harness.js';
import { commandArbitraries, type Model, type Real, settleHistory } from './commands.js';
import { installInvariants, removeInvariants } from './invariants.js';
import { KNOWN_BUGS, type KnownBug } from './known-bugs.js';
import { QUIET, type QuietKind, World, ZONES, type Zone } from './world.js';

/**
 * A proof by random histories. fast-check draws a shop (3-D Secure on or off, a time zone on either
 * side of UTC, with or without quiet hours) and sequences of what can happen to its subscriptions
 * (created by card, by token or on the hosted page, with cards that approve, decline, err, time out,
 * or ask for 3-D Secure that is passed or failed; created with an Idempotency-Key and retried at once
 * or while the first runs; several created at the same moment; the shop's zone changed; the test
 * clock advanced; the next charge switched to another card; cancelled, with or without a key and a
 * retry; read; a billing process killed mid-run and another started) and after every step asks the
 * store whether the invariants hold (invariants.ts): at most one successful charge per subscription
 * and period, each period as long as its plan says, no charge after cancellation and no money kept
 * that settled after it, state and charges agreeing, every state change announced in order, and no
 * renewal charged inside quiet hours. A failing history shrinks to a minimal one, printed with its
 * seed and path.
 *
 * KOPEK_MODEL_RUNS=N runs N histories per file (default 70; three files run them, so CI draws
 * 210); KOPEK_MODEL_COMMANDS=N allows up to N commands
 * each (default 12); KOPEK_MODEL_SEED and KOPEK_MODEL_PATH replay a reported failure;
 * KOPEK_MODEL_STRICT=1 tolerates not even the known bugs (known-bugs.ts), to see them found again.
 */

const REAL_NOW = '2026-01-15T10:00:00.000Z';

function positiveEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number from 1, not ${raw}`);
  return n;
}

function integerEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new Error(`${name} must be a whole number, not ${raw}`);
  return n;
}

const RUNS = positiveEnv('KOPEK_MODEL_RUNS', 70);
const COMMANDS = positiveEnv('KOPEK_MODEL_COMMANDS', 12);
const SEED = integerEnv('KOPEK_MODEL_SEED');
const PATH = process.env.KOPEK_MODEL_PATH || undefined;
const TOLERATED = process.env.KOPEK_MODEL_STRICT === '1' ? [] : KNOWN_BUGS;

let h: Harness;

/** The worker's store with the invariants installed, for the file that calls it. */
export function useHistoryStore(): void {
  beforeAll(async () => {
    h = await harness();
    await installInvariants(h.db);
  });
  afterAll(async () => {
    await removeInvariants(h.db);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
}

/**
 * One history: a fresh shop (3-D Secure on or off), the commands in order with the invariants after
 * each, and at the end the leases run out.
 */
export interface Shop {
  threeDs: boolean;
  zone?: Zone;
  quiet?: QuietKind;
}

export async function runHistory(
  shop: boolean | Shop,
  cmds: Iterable<fc.AsyncCommand<Model, Real>>,
  bugs: readonly KnownBug[],
) {
  const s = typeof shop === 'boolean' ? { threeDs: shop } : shop;
  const real: Real = { world: await World.open(h, s.threeDs, s.zone, s.quiet), bugs };
  await withClock(h, REAL_NOW, async () => {
    await fc.asyncModelRun(() => ({ model: { subs: 0 }, real }), cmds);
    await settleHistory(real);
  });
}

const shopArb: fc.Arbitrary<Shop> = fc.record({
  threeDs: fc.boolean(),
  zone: fc.constantFrom<Zone>(...ZONES),
  quiet: fc.constantFrom<QuietKind>(...(Object.keys(QUIET) as QuietKind[])),
});
const history = fc.tuple(shopArb, fc.commands(commandArbitraries, { maxCommands: COMMANDS }));

/** RUNS random histories, each checked after every step. */
export function describeHistories(label: string): void {
  describe(`billing histories (${label})`, () => {
    it(
      `keep every invariant after every step (${RUNS} histories of up to ${COMMANDS} commands)`,
      async () => {
        await fc.assert(
          fc.asyncProperty(history, ([shop, cmds]) => runHistory(shop, cmds, TOLERATED)),
          { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}), ...(PATH ? { path: PATH } : {}) },
        );
        // A larger run asked for by the environment gets the time it needs.
      },
      Math.max(120_000, RUNS * COMMANDS * 1_000),
    );
  });
}
