import fc from 'fast-check';
import { leftOpen, type Violation, violations } from './invariants.js';
import { type KnownBug, unexplained } from './known-bugs.js';
import {
  type CardKind,
  type KillPoint,
  type NextCharge,
  type PlanKind,
  type World,
  ZONES,
  type Zone,
} from './world.js';

/**
 * The commands of a random history: what can happen to a shop's subscriptions. Each runs against the
 * world, then the invariants are asked of the store; any violation fails the history, which
 * fast-check then shrinks to a minimal one. Subscriptions are named by a number taken modulo how
 * many exist, so a shrunk history keeps naming one.
 */

export interface Model {
  subs: number;
}

export interface Real {
  world: World;
  /** Known bugs whose violations the history tolerates (each reproduced by its own test). */
  bugs: readonly KnownBug[];
}

type Cmd = fc.AsyncCommand<Model, Real>;

export class InvariantViolated extends Error {
  constructor(
    readonly after: string,
    readonly found: Violation[],
  ) {
    super(`after ${after}:\n${found.map((f) => `  ${f.check}: ${f.v}`).join('\n')}`);
  }
}

async function expectNone(r: Real, after: string, found: Violation[]): Promise<void> {
  if (found.length === 0) return;
  const left = await unexplained(r.world.h.db, r.world.shopId, found, r.bugs);
  if (left.length > 0) throw new InvariantViolated(after, left);
}

async function step(r: Real, name: string, act: (w: World) => Promise<unknown>): Promise<void> {
  // Real time moves a millisecond a step, so an instant tells which step came first.
  r.world.h.clock.advance(1);
  await act(r.world);
  await expectNone(r, name, [
    ...(await violations(r.world.h.db, r.world.shopId)),
    ...(await r.world.paidInQuietHours()).map((q) => ({ check: 'f.quiet_hours', ...q })),
  ]);
}

/**
 * The end of a history: the shop's clock passes every lease taken so far, billing runs on the way,
 * and then no attempt claimed before may still wait for an answer (invariant e), besides (a) to (d).
 */
export async function settleHistory(r: Real): Promise<void> {
  const { world } = r;
  world.h.clock.advance(1);
  const before = await world.shopNow();
  await world.restart();
  await expectNone(r, 'the leases ran out', [
    ...(await violations(world.h.db, world.shopId)),
    ...(await leftOpen(world.h.db, world.shopId, before)),
  ]);
}

abstract class Base implements Cmd {
  check(_m: Readonly<Model>): boolean {
    return true;
  }
  abstract run(m: Model, r: Real): Promise<void>;
  abstract toString(): string;
}

abstract class OnSub extends Base {
  constructor(readonly pick: number) {
    super();
  }
  override check(m: Readonly<Model>): boolean {
    return m.subs > 0;
  }
}

export type CreatePath =
  | { path: 'card' | 'token'; card: CardKind }
  | { path: 'page'; card: CardKind | 'abandon' };

export class Create extends Base {
  constructor(
    readonly how: CreatePath,
    readonly plan: PlanKind,
  ) {
    super();
  }
  async run(m: Model, r: Real) {
    await step(r, this.toString(), (w) => {
      const { how } = this;
      if (how.path === 'card') return w.createByCard(this.plan, how.card);
      if (how.path === 'token') return w.createByToken(this.plan, how.card);
      return w.createByPage(this.plan, how.card);
    });
    m.subs++;
  }
  toString() {
    return `Create(${this.how.path}, ${this.plan}, ${this.how.card})`;
  }
}

export class FinishThreeDs extends OnSub {
  constructor(
    pick: number,
    readonly outcome: 'passed' | 'failed',
  ) {
    super(pick);
  }
  run(_m: Model, r: Real) {
    return step(r, this.toString(), (w) => w.finishThreeDs(this.pick, this.outcome));
  }
  toString() {
    return `FinishThreeDs(#${this.pick}, ${this.outcome})`;
  }
}

export class Cancel extends OnSub {
  constructor(
    pick: number,
    readonly keyed = false,
  ) {
    super(pick);
  }
  run(_m: Model, r: Real) {
    return step(r, this.toString(), (w) => w.cancel(this.pick, this.keyed));
  }
  toString() {
    return this.keyed ? `CancelKeyed(#${this.pick})` : `Cancel(#${this.pick})`;
  }
}

/** A keyed create, retried with the same key at once or while the first still runs. */
export class CreateKeyed extends Base {
  constructor(
    readonly plan: PlanKind,
    readonly card: CardKind,
    readonly concurrent: boolean,
  ) {
    super();
  }
  async run(m: Model, r: Real) {
    await step(r, this.toString(), (w) => w.createKeyed(this.plan, this.card, this.concurrent));
    m.subs++;
  }
  toString() {
    return `CreateKeyed(${this.plan}, ${this.card}${this.concurrent ? ', concurrent' : ''})`;
  }
}

/** Several creates by card at the same moment. */
export class CreateConcurrently extends Base {
  constructor(
    readonly plan: PlanKind,
    readonly cards: readonly CardKind[],
  ) {
    super();
  }
  async run(m: Model, r: Real) {
    await step(r, this.toString(), (w) => w.createConcurrently(this.plan, this.cards));
    m.subs += this.cards.length;
  }
  toString() {
    return `CreateConcurrently(${this.plan}, ${this.cards.join(' ')})`;
  }
}

/** The shop changes its time zone. */
export class SetZone extends Base {
  constructor(readonly zone: Zone) {
    super();
  }
  run(_m: Model, r: Real) {
    return step(r, this.toString(), (w) => w.setZone(this.zone));
  }
  toString() {
    return `SetZone(${this.zone})`;
  }
}

export class Read extends OnSub {
  run(_m: Model, r: Real) {
    return step(r, this.toString(), (w) => w.read(this.pick));
  }
  toString() {
    return `Read(#${this.pick})`;
  }
}

export class SwitchCard extends OnSub {
  constructor(
    pick: number,
    readonly next: NextCharge,
  ) {
    super(pick);
  }
  run(_m: Model, r: Real) {
    return step(r, this.toString(), (w) => w.switchCard(this.pick, this.next));
  }
  toString() {
    return `NextCharge(#${this.pick}, ${this.next})`;
  }
}

export class Advance extends Base {
  constructor(readonly by: string) {
    super();
  }
  run(_m: Model, r: Real) {
    return step(r, this.toString(), (w) => w.advance(this.by));
  }
  toString() {
    return `Advance(${this.by})`;
  }
}

export class BillNow extends Base {
  run(_m: Model, r: Real) {
    return step(r, this.toString(), (w) => w.bill());
  }
  toString() {
    return 'BillNow';
  }
}

export class KillBilling extends Base {
  constructor(readonly point: KillPoint) {
    super();
  }
  run(_m: Model, r: Real) {
    return step(r, this.toString(), (w) => w.killBilling(this.point));
  }
  toString() {
    return `KillBilling(${this.point})`;
  }
}

export class Restart extends Base {
  run(_m: Model, r: Real) {
    return step(r, this.toString(), (w) => w.restart());
  }
  toString() {
    return 'Restart';
  }
}

const planKind = fc.constantFrom<PlanKind>('monthly', 'daily', 'freeTrial', 'paidTrial', 'finite');
const cardKind = fc.constantFrom<CardKind>(
  'approved',
  'declined',
  'error',
  'timeout',
  'firstThenDeclined',
  'challenge',
  'frictionlessRejected',
);
const pick = fc.nat({ max: 7 });

const createPath: fc.Arbitrary<CreatePath> = fc.oneof(
  fc.record({ path: fc.constantFrom('card' as const, 'token' as const), card: cardKind }),
  fc.record({
    path: fc.constant('page' as const),
    card: fc.oneof(cardKind, fc.constant('abandon' as const)),
  }),
);

/** The commands and how often each is drawn. */
export const commandArbitraries: fc.Arbitrary<Cmd>[] = [
  fc.tuple(createPath, planKind).map(([how, plan]) => new Create(how, plan)),
  fc.tuple(createPath, planKind).map(([how, plan]) => new Create(how, plan)),
  fc.constantFrom('PT1M', 'PT6M', 'PT1H', 'P1D', 'P3D', 'P8D', 'P1M').map((by) => new Advance(by)),
  fc.constantFrom('PT1H', 'P1D', 'P1M').map((by) => new Advance(by)),
  fc.constant(new BillNow()),
  pick.map((p) => new Cancel(p)),
  pick.map((p) => new Cancel(p, true)),
  fc
    .tuple(planKind, cardKind, fc.boolean())
    .map(([plan, card, concurrent]) => new CreateKeyed(plan, card, concurrent)),
  fc
    .tuple(planKind, fc.array(cardKind, { minLength: 2, maxLength: 4 }))
    .map(([plan, cards]) => new CreateConcurrently(plan, cards)),
  fc.constantFrom<Zone>(...ZONES).map((z) => new SetZone(z)),
  pick.map((p) => new Read(p)),
  fc
    .tuple(pick, fc.constantFrom<'passed' | 'failed'>('passed', 'failed'))
    .map(([p, o]) => new FinishThreeDs(p, o)),
  fc
    .tuple(pick, fc.constantFrom<NextCharge>('approved', 'declined', 'error', 'timeout', 'refused'))
    .map(([p, n]) => new SwitchCard(p, n)),
  fc.constantFrom<KillPoint>('in_claim', 'before_send', 'after_answer').map((p) => new KillBilling(p)),
  fc.constant(new Restart()),
];
