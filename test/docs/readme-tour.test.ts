import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import {
  commands,
  curlRequest,
  jq,
  jqStage,
  matches,
  section,
  shellBlocks,
  type TourCommand,
  words,
} from './tour.js';

/**
 * The README's five-minute tour, run as written: each command of its ```sh blocks, in order, as the
 * sandbox shop, against an in-process Kopek. Each must answer the status written under it and print
 * what the README shows (see tour.ts for the conventions). A command that breaks, or a README that
 * says something the service does not do, fails here.
 */

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const tour = section(readme, 'A five-minute tour');
const steps: TourCommand[] = shellBlocks(tour).flatMap(commands);

/** What a command did: its request, the raw answer and what it printed. */
interface Ran {
  status: number;
  requestBody?: string;
  responseText: string;
  printed: unknown;
}

const ASSIGN_OUTPUT = /^([A-Za-z_]\w*)=\$\(([\s\S]*)\)\s*$/;
const ASSIGN_VALUE = /^([A-Za-z_]\w*)=(.*)$/s;

let h: Harness;
let shop: TestShop;
const vars: Record<string, string> = {};
const ran: Ran[] = [];

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h, { name: 'Sandbox shop', test: true });
});

async function runPipeline(command: string): Promise<Ran> {
  const argv = words(command, vars);
  const stages: string[][] = [[]];
  for (const w of argv) {
    if (w === '|') stages.push([]);
    else stages.at(-1)?.push(w);
  }
  const request = curlRequest(stages[0] ?? []);
  const url = new URL(request.url);
  const answer = await client(h, undefined).send(
    request.method as 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH',
    url.pathname + url.search,
    request.body,
    request.headers,
  );
  // The test app's public addresses stand for the ones the tour's server prints.
  const shown = vars.API ?? 'http://localhost:3000';
  const text = answer.text.replaceAll(h.config.checkoutUrl, shown).replaceAll(h.config.publicUrl, shown);
  let printed: unknown = request.printsStatus ? String(answer.status) : text;
  let raw = request.printsStatus;
  for (const stage of stages.slice(1)) {
    const { raw: r, filter } = jqStage(stage);
    printed = jq(filter, typeof printed === 'string' && !raw ? JSON.parse(printed) : printed);
    raw = r && typeof printed === 'string';
  }
  if (!raw && typeof printed === 'string' && stages.length === 1) {
    try {
      printed = JSON.parse(printed);
    } catch {
      // Not JSON: the body as it is.
    }
  }
  return {
    status: answer.status,
    ...(request.body !== undefined ? { requestBody: request.body } : {}),
    responseText: text,
    printed,
  };
}

describe("the README's tour", () => {
  it('has its steps, each saying what it answers', () => {
    const requests = steps.filter((s) => !ASSIGN_VALUE.test(s.text) || ASSIGN_OUTPUT.test(s.text));
    expect(requests.length).toBeGreaterThanOrEqual(12);
    expect(requests.filter((s) => !s.expect).map((s) => s.text)).toEqual([]);
    for (const name of ['SHOP_ID', 'SECRET_KEY', 'API']) {
      expect(steps.some((s) => s.text.startsWith(`${name}=`))).toBe(true);
    }
  });

  for (const [n, step] of steps.entries()) {
    const title = `${n + 1}: ${step.text.split('\n')[0]?.slice(0, 110)}`;
    it(title, async () => {
      const output = ASSIGN_OUTPUT.exec(step.text);
      const value = output ? undefined : ASSIGN_VALUE.exec(step.text);
      if (value) {
        const name = value[1] as string;
        // The sandbox shop of `npm start` is this test's own shop.
        if (name === 'SHOP_ID') vars[name] = String(shop.shop.id);
        else if (name === 'SECRET_KEY') vars[name] = shop.secret;
        else vars[name] = words(value[2] as string, vars)[0] ?? '';
        return;
      }
      const result = await runPipeline(output ? (output[2] as string) : step.text);
      ran.push(result);
      const context = `${step.text}\n→ ${result.status} ${result.responseText.slice(0, 2000)}`;
      expect(result.status, context).toBe(step.expect?.status);
      if (step.expect && 'prints' in step.expect) {
        expect(
          matches(result.printed, step.expect.prints),
          `${context}\nprinted ${JSON.stringify(result.printed)}`,
        ).toBe(true);
      }
      if (output) {
        const kept = typeof result.printed === 'string' ? result.printed : JSON.stringify(result.printed);
        expect(kept, context).not.toMatch(/^(null)?$/);
        vars[output[1] as string] = kept;
      }
    });
  }

  it('makes the redirect variant without a card, and it waits for the buyer', () => {
    const redirect = ran.find(
      (r) => r.responseText.includes('"redirect_url"') && r.requestBody?.includes('"plan"'),
    );
    expect(redirect, 'a subscription created for the hosted checkout page').toBeDefined();
    expect(Object.keys(JSON.parse(redirect?.requestBody ?? '{}'))).not.toContain('card');
    expect(JSON.parse(redirect?.responseText ?? '{}').state).toBe('redirecting');
  });
});
