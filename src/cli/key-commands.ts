/** The CLI side of `kopek keys rotate`: options in, text out (the work is control/key-commands.ts). */
import { parseArgs } from 'node:util';
import type { KeysRotated } from '../control/key-commands.js';
import { ShopInputError } from '../shops/index.js';
import type { CliContext } from './context.js';

export function rotationText(r: KeysRotated): string {
  const lines = [`Current master key: ${r.currentKey}`];
  if (r.began)
    lines.push('Made a new master key in DATA_DIR/master.key; the one it replaces is master.key.previous.');
  for (const c of r.columns) {
    const unreadable = c.unreadable > 0 ? ` (${c.unreadable} open under none of the keys given)` : '';
    lines.push(`  ${c.column}: ${c.resealed} re-sealed, ${c.left} left${unreadable}`);
    if (c.problem) lines.push(`    ${c.problem}`);
  }
  const previous = r.previousKeys.join(', ');
  if (!r.done) {
    const unreadable = r.columns.every((c) => c.left === c.unreadable);
    lines.push(
      unreadable
        ? 'Not done: the values left open under none of the keys given; add the key that sealed them to KOPEK_MASTER_KEY_PREVIOUS and run again. Keep the previous keys.'
        : 'Not done: some values were in use or changed meanwhile; run `kopek keys rotate` again. Keep the previous keys.',
    );
  } else if (r.keys === 'data-dir') {
    lines.push(
      r.previousRemoved
        ? `Done: everything is sealed under ${r.currentKey}; the previous key (${previous}) was deleted. Back up DATA_DIR/master.key.`
        : `Done: everything is sealed under ${r.currentKey}.`,
    );
  } else {
    lines.push(
      previous
        ? `Done: nothing is left sealed under ${previous}. Remove KOPEK_MASTER_KEY_PREVIOUS from every instance and restart them.`
        : `Done: everything is sealed under ${r.currentKey}; no previous key is set.`,
    );
  }
  return lines.join('\n');
}

export async function keysRotateCommand({ io, store }: CliContext, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { 'batch-size': { type: 'string' } }, strict: true });
  const raw = values['batch-size'];
  if (raw !== undefined && !/^\d{1,6}$/.test(raw))
    throw new ShopInputError('--batch-size must be a whole number');
  const input = raw === undefined ? {} : { batchSize: Number(raw) };
  const report = await store('keys rotate', input, (line) => io.out(line));
  io.out(rotationText(report));
  return report.done ? 0 : 1;
}
