/**
 * How the operator runs `kopek` where this process runs, so that what Kopek tells them to run next
 * (`… shop create --name 'My shop'`) works as printed: KOPEK_CLI when set (the image and compose.yaml
 * set it, since only the host knows the container's name); otherwise the way this process itself was
 * started: through npm (`npm start`, `npx kopek`) → `npx kopek`; as `kopek` from the PATH (a global
 * install or a link) → `kopek`; as `node some/file.js` → `node some/file.js`.
 */
import { basename, isAbsolute, relative } from 'node:path';
import type { Config } from '../config.js';

export interface Invocation {
  env: Record<string, string | undefined>;
  /** The script node was given (process.argv[1]). */
  script: string | undefined;
  cwd: string;
}

export function processInvocation(): Invocation {
  return { env: process.env, script: process.argv[1], cwd: process.cwd() };
}

export function cliCommand(config: Pick<Config, 'cliCommand'>, how: Invocation): string {
  if (config.cliCommand) return config.cliCommand;
  if (how.env.npm_command || how.env.npm_lifecycle_event) return 'npx kopek';
  if (!how.script) return 'npx kopek';
  if (basename(how.script) === 'kopek') return 'kopek';
  const path = relative(how.cwd, how.script);
  const shown = path.startsWith('..') || isAbsolute(path) ? how.script : path;
  return `node ${/\s/.test(shown) ? `'${shown}'` : shown}`;
}
