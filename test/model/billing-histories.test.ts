import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, it, vi } from 'vitest';
import { type Harness, harness, withClock } from '../harness.js';
import {
  Advance,
  Cancel,
  Create,
  commandArbitraries,
  FinishThreeDs,
  KillBilling,
  type Model,
  type Real,
  Restart,
  settleHistory,
} from './commands.js';
import { installInvariants, removeInvariants } from './invariants.js';
import { KNOWN_BUGS, type KnownBug } from './known-bugs.js';
import { World } from './world.js';

/**
 * A proof by random histories. fast-check draws sequences of what can happen to a shop's
 * subscriptions (created by card, by token or on the hosted page, with cards that approve, decline,
 * err, time out, or ask for 3-D Secure that is passed or failed; the test clock advanced; the next
 * charge switched to another card; cancelled; read; a billing process killed mid-run and another
 * started) and after every step asks the store whether the invariants hold (invariants.ts): at most
 * one successful charge per subscription and period, no charge after cancellation, state and charges
 * agreeing, every state change announced in order. A failing history shrinks to a minimal one, printed
 * with its seed and path.
 *
 * KOPEK_MODEL_RUNS=N runs N histories (default 50); KOPEK_MODEL_COMMANDS=N allows up to N commands
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

const RUNS = positiveEnv('KOPEK_MODEL_RUNS', 50);
const COMMANDS = positiveEnv('KOPEK_MODEL_COMMANDS', 12);
const SEED = integerEnv('KOPEK_MODEL_SEED');
const PATH = process.env.KOPEK_MODEL_PATH || undefined;
const TOLERATED = process.env.KOPEK_MODEL_STRICT === '1' ? [] : KNOWN_BUGS;

let h: Harness;

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

/**
 * One history: a fresh shop (3-D Secure on or off), the commands in order with the invariants after
 * each, and at the end the leases run out.
 */
async function runHistory(
  threeDs: boolean,
  cmds: Iterable<fc.AsyncCommand<Model, Real>>,
  bugs: readonly KnownBug[],
) {
  const real: Real = { world: await World.open(h, threeDs), bugs };
  await withClock(h, REAL_NOW, async () => {
    await fc.asyncModelRun(() => ({ model: { subs: 0 }, real }), cmds);
    await settleHistory(real);
  });
}

const history = fc.tuple(fc.boolean(), fc.commands(commandArbitraries, { maxCommands: COMMANDS }));

describe('billing histories', () => {
  it(
    `keep every invariant after every step (${RUNS} histories of up to ${COMMANDS} commands)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(history, ([threeDs, cmds]) => runHistory(threeDs, cmds, TOLERATED)),
        { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}), ...(PATH ? { path: PATH } : {}) },
      );
      // A larger run asked for by the environment gets the time it needs.
    },
    Math.max(120_000, RUNS * COMMANDS * 1_000),
  );
});

/**
 * Bugs the random histories found and that are fixed: their minimal histories keep every invariant,
 * with nothing tolerated.
 */
describe('fixed bugs, replayed', () => {
  it('an attempt of unknown outcome is resolved once its subscription is cancelled', () =>
    // Found with seeds 11 and 12 (bug e): the timeout card's charge waited for the acquirer's late
    // answer, the shop cancelled, and billing, which looks at a cancelled subscription no more,
    // never asked the gateway how it ended. It now asks about such attempts once their lease is over.
    runHistory(
      false,
      [new Create({ path: 'card', card: 'timeout' }, 'monthly'), new Cancel(0), new Restart()],
      [],
    ));

  it('a paid-trial renewal declined step by step keeps the trial and its newest event says so', () =>
    // Found with seed 153675268 (bug d): the claim announced trial_ended (trial_processing) and the
    // decline, retried later, put the subscription back to trial with no event. The answer, not the
    // claim, now ends the trial.
    runHistory(
      false,
      [new Create({ path: 'card', card: 'firstThenDeclined' }, 'paidTrial'), new Advance('P8D')],
      [],
    ));

  it('a payment a killed billing process made is recorded when the shop then cancels', () =>
    // Found with seed 1744763308, path "66:3:3:4:4": the process died after the gateway charged
    // period 2, and the shop cancelled before the lease ran out. Billing never looks at a cancelled
    // subscription again, so the payment stayed unrecorded; now the cancel settles it first.
    runHistory(
      false,
      [
        new Create({ path: 'card', card: 'approved' }, 'monthly'),
        new KillBilling('after_answer'),
        new Cancel(0),
      ],
      [],
    ));

  it('a 3-D Secure first charge waiting past its lease is not charged again by billing', () =>
    // Found with seed -1390352091, path "27:3:3:3:3": after the 5-minute lease billing claimed
    // period 1 again and charged the stored card without 3-D Secure while the step still waited.
    runHistory(true, [new Create({ path: 'card', card: 'challenge' }, 'monthly'), new Advance('PT6M')], []));

  it('... and when the cardholder then passes 3-D Secure, period 1 is paid once', () =>
    runHistory(
      true,
      [
        new Create({ path: 'card', card: 'challenge' }, 'monthly'),
        new Advance('PT6M'),
        new FinishThreeDs(0, 'passed'),
      ],
      [],
    ));

  it('a free trial on a 3-D Secure shop verifies the card, released at once, and is paid when it ends', () =>
    runHistory(
      true,
      [
        new Create({ path: 'card', card: 'challenge' }, 'freeTrial'),
        new Create({ path: 'card', card: 'approved' }, 'freeTrial'),
        new Create({ path: 'page', card: 'approved' }, 'freeTrial'),
        new FinishThreeDs(0, 'passed'),
        new Advance('P8D'),
      ],
      [],
    ));

  it('a verified free trial whose first payment is declined fails as a first payment does', () =>
    // Found with seed 1548321684, path "29:4:2": the verification's authorization counted as money
    // taken before, so the invariants expected retries of a payment that had never succeeded.
    runHistory(
      true,
      [new Create({ path: 'card', card: 'firstThenDeclined' }, 'freeTrial'), new Advance('P8D')],
      [],
    ));
});
