/**
 * What the benchmark measures. To add a scenario, append an entry: a name, the server it targets, the
 * request, and a body builder called once per request (`seq` counts requests, for unique values).
 * A Kopek scenario whose route answers 404 (the feature has not landed) is skipped unless named on the
 * command line. `compareWith` names the baseline scenario its req/s is divided by; `goals` are printed
 * as met or missed.
 */
export type Target = 'kopek' | 'baseline';

export interface BodyContext {
  seq: number;
}

export interface Scenario {
  /** Unique; what `npm run bench -- <name>` selects (a baseline is selected with its Kopek scenario). */
  name: string;
  target: Target;
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: (ctx: BodyContext) => unknown;
  compareWith?: string;
  goals?: { minRatio?: number; maxP99Ms?: number };
}

const TEST_IP = '203.0.113.7';

export function customerBody({ seq }: BodyContext) {
  return { email: `bench${seq}@example.com`, ip: TEST_IP };
}

/** A 16-digit Visa number with a valid Luhn check digit. */
export function luhnCard(body15: string): string {
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    let d = Number(body15[14 - i]);
    if (i % 2 === 0) d *= 2;
    sum += d > 9 ? d - 9 : d;
  }
  return `${body15}${(10 - (sum % 10)) % 10}`;
}

/**
 * A different card for every request, as many buyers would pay: the gateway serialises charges of one
 * card (duplicate detection), so one shared card would measure that lock. The sandbox approves every
 * valid number that is not one of its test cards, none of which starts with 49.
 */
const card = (seq: number) => ({
  number: luhnCard(`49${String(seq % 1e13).padStart(13, '0')}`),
  verification_value: '123',
  holder: 'Bench Runner',
  exp_month: '12',
  exp_year: String(new Date().getUTCFullYear() + 3),
});

/** The platform's transaction protocol: `{"request": {...}}`, approved by the sandbox acquirer. */
export function paymentBody({ seq }: BodyContext) {
  return {
    request: {
      amount: 1999,
      currency: 'USD',
      description: 'Benchmark payment',
      tracking_id: `bench-${seq}`,
      test: true,
      credit_card: card(seq),
      customer: { email: `bench${seq}@example.com`, ip: TEST_IP },
      billing_address: {
        first_name: 'Bench',
        last_name: 'Runner',
        country: 'US',
        city: 'Denver',
        address: '1 Main St',
        zip: '80202',
      },
    },
  };
}

/** The card variant with a full customer and plan: one charge and the subscription's rows per request. */
export function subscriptionBody({ seq }: BodyContext) {
  return {
    customer: { email: `bench${seq}@example.com`, ip: TEST_IP },
    plan: {
      title: 'Benchmark plan',
      currency: 'USD',
      plan: { amount: 999, interval: 1, interval_unit: 'month' },
    },
    tracking_id: `bench-${seq}`,
    card: card(seq),
  };
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'customers:baseline',
    target: 'baseline',
    method: 'POST',
    path: '/customers',
    body: customerBody,
  },
  {
    name: 'customers',
    target: 'kopek',
    method: 'POST',
    path: '/customers',
    body: customerBody,
    compareWith: 'customers:baseline',
    goals: { minRatio: 0.8, maxP99Ms: 15 },
  },
  {
    name: 'payments',
    target: 'kopek',
    method: 'POST',
    path: '/transactions/payments',
    body: paymentBody,
    // The card gateway issue's target, against the same bare INSERT route.
    compareWith: 'customers:baseline',
    goals: { minRatio: 0.4, maxP99Ms: 20 },
  },
  {
    name: 'subscriptions',
    target: 'kopek',
    method: 'POST',
    path: '/subscriptions',
    body: subscriptionBody,
    // The subscriptions issue's target, against the same bare INSERT route.
    compareWith: 'customers:baseline',
    goals: { minRatio: 0.35, maxP99Ms: 25 },
  },
];

/**
 * The scenarios the command line asks for (all when it names none), each Kopek scenario preceded by
 * the baseline it is compared with.
 */
export function selectScenarios(names: string[], all: Scenario[] = SCENARIOS): Scenario[] {
  const unknown = names.filter((n) => !all.some((s) => s.name === n));
  if (unknown.length > 0) {
    throw new Error(`Unknown scenario ${unknown.join(', ')}; known: ${all.map((s) => s.name).join(', ')}`);
  }
  const wanted = new Set(names.length > 0 ? names : all.map((s) => s.name));
  for (const s of all) if (wanted.has(s.name) && s.compareWith) wanted.add(s.compareWith);
  return all.filter((s) => wanted.has(s.name));
}
