/**
 * Reads the README's five-minute tour as a shell session, so a test can run it without a shell.
 *
 * The tour is written for a person to paste into bash, and its conventions are simple enough to
 * read here:
 * - every ```sh block of the tour's section is a list of commands, in order;
 * - `NAME=value` sets a variable, `NAME=$(curl … | jq -r FILTER)` keeps what the pipeline prints;
 * - a command is `curl` (options -s, -u, -H, -d, -X, -o, -w) piped into at most a few `jq`;
 * - the comment right under a command, `# → STATUS [JSON]` (continued on `#` lines), is the HTTP
 *   status it answers and, when given, what it prints, as JSON; `…` inside a string stands for any
 *   text.
 * Anything else (another program, an unknown option, an unknown variable) is an error, so the tour
 * cannot grow a command this reader silently skips.
 */

export interface Expectation {
  status: number;
  /** What the command prints, when the README shows it. */
  prints?: unknown;
}

export interface TourCommand {
  /** The command as written, continuation lines included. */
  text: string;
  expect?: Expectation;
}

/** The section of `markdown` under the `## ` heading that starts with `heading`. */
export function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}`);
  if (start < 0) throw new Error(`no section "## ${heading}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The ```sh blocks of a piece of markdown, in order. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
}

/** Whether a command's text still needs more lines: an open quote, `$(`, or a trailing backslash. */
function incomplete(text: string): boolean {
  let quote: "'" | '"' | undefined;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (quote === '"') {
      if (c === '\\') i++;
      else if (c === '"') quote = undefined;
    } else if (c === '\\') i++;
    else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1] ?? ''))) {
      // A comment runs to the end of its line.
      const nl = text.indexOf('\n', i);
      if (nl < 0) break;
      i = nl;
    } else if (c === '$' && text[i + 1] === '(') {
      depth++;
      i++;
    } else if (c === ')' && depth > 0) depth--;
  }
  return quote !== undefined || depth > 0 || /\\\n?$/.test(text);
}

/** The commands of one ```sh block with the expectation written under each. */
export function commands(block: string): TourCommand[] {
  const out: TourCommand[] = [];
  let current: string[] = [];
  let expectLines: string[] | undefined;
  const finishExpectation = () => {
    if (!expectLines) return;
    const last = out.at(-1);
    if (!last) throw new Error(`an expectation before any command: ${expectLines[0]}`);
    if (last.expect) throw new Error(`two expectations under one command: ${last.text}`);
    last.expect = parseExpectation(expectLines.join(' '));
    expectLines = undefined;
  };
  for (const line of block.split('\n')) {
    if (current.length > 0) {
      current.push(line);
      if (!incomplete(current.join('\n'))) {
        out.push({ text: current.join('\n') });
        current = [];
      }
      continue;
    }
    if (line.startsWith('# →')) {
      finishExpectation();
      expectLines = [line.slice('# →'.length)];
      continue;
    }
    if (expectLines && /^#\s/.test(line)) {
      expectLines.push(line.slice(1));
      continue;
    }
    finishExpectation();
    if (line.trim() === '' || line.startsWith('#')) continue;
    current = [line];
    if (!incomplete(line)) {
      out.push({ text: line });
      current = [];
    }
  }
  finishExpectation();
  if (current.length > 0) throw new Error(`a command never ends: ${current.join('\n')}`);
  return out;
}

function parseExpectation(text: string): Expectation {
  const m = /^\s*(\d{3})\b\s*(.*)$/s.exec(text);
  if (!m) throw new Error(`"# →" must start with an HTTP status: ${text}`);
  const rest = (m[2] ?? '').trim();
  return rest === '' ? { status: Number(m[1]) } : { status: Number(m[1]), prints: JSON.parse(rest) };
}

/** Splits shell text into words, expanding `$NAME` outside single quotes; `|` is its own word. */
export function words(text: string, vars: Record<string, string>): string[] {
  const out: string[] = [];
  let word: string | undefined;
  const add = (s: string) => {
    word = (word ?? '') + s;
  };
  const end = () => {
    if (word !== undefined) out.push(word);
    word = undefined;
  };
  const variable = (i: number): [string, number] => {
    const m = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/.exec(text.slice(i));
    if (!m) return ['$', i + 1];
    const name = (m[1] ?? m[2]) as string;
    const value = vars[name];
    if (value === undefined) throw new Error(`$${name} is not set at this point of the tour`);
    return [value, i + m[0].length];
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '\\' && text[i + 1] === '\n') i += 2;
    else if (/\s/.test(c)) {
      end();
      i++;
    } else if (c === '#' && word === undefined) {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl;
    } else if (c === '|') {
      end();
      out.push('|');
      i++;
    } else if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) throw new Error(`an unclosed quote: ${text}`);
      add(text.slice(i + 1, close));
      i = close + 1;
    } else if (c === '"') {
      add('');
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '$') {
          const [value, next] = variable(i);
          add(value);
          i = next;
        } else if (text[i] === '\\' && /["\\$`]/.test(text[i + 1] ?? '')) {
          add(text[i + 1] as string);
          i += 2;
        } else {
          add(text[i] as string);
          i++;
        }
      }
      if (i >= text.length) throw new Error(`an unclosed quote: ${text}`);
      i++;
    } else if (c === '$') {
      const [value, next] = variable(i);
      add(value);
      i = next;
    } else {
      add(c);
      i++;
    }
  }
  end();
  return out;
}

export interface CurlRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** `-w '%{http_code}\n'`: the command prints the status instead of the body. */
  printsStatus: boolean;
}

/** A curl command line (its words, `curl` first) as the request it sends. */
export function curlRequest(argv: string[]): CurlRequest {
  if (argv[0] !== 'curl') throw new Error(`the tour runs curl, not ${argv[0]}`);
  const headers: Record<string, string> = {};
  let method: string | undefined;
  let body: string | undefined;
  let url: string | undefined;
  let printsStatus = false;
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '-s' || arg === '--silent') continue;
    if (arg === '-u' || arg === '--user') {
      headers.authorization = `Basic ${Buffer.from(value()).toString('base64')}`;
    } else if (arg === '-H' || arg === '--header') {
      const h = value();
      const colon = h.indexOf(':');
      headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
    } else if (arg === '-d' || arg === '--data') body = value();
    else if (arg === '-X' || arg === '--request') method = value();
    else if (arg === '-o' || arg === '--output') {
      if (value() !== '/dev/null') throw new Error('the tour writes no files');
    } else if (arg === '-w' || arg === '--write-out') {
      if (value() !== '%{http_code}\\n') throw new Error("the tour's -w prints the status only");
      printsStatus = true;
    } else if (arg.startsWith('-')) throw new Error(`curl option ${arg} is not read by this test`);
    else if (url === undefined) url = arg;
    else throw new Error(`two URLs: ${url} and ${arg}`);
  }
  if (url === undefined) throw new Error('curl without a URL');
  return {
    method: method ?? (body !== undefined ? 'POST' : 'GET'),
    url,
    headers,
    ...(body !== undefined ? { body } : {}),
    printsStatus,
  };
}

/**
 * The few jq filters the tour uses: `.`, paths (`.a.b`), `{a, b: .c.d}`, `map(F)`, `length` and
 * pipes between them.
 */
export function jq(filter: string, input: unknown): unknown {
  const parts = splitTop(filter, '|');
  if (parts.length > 1) return parts.reduce<unknown>((v, p) => jq(p, v), input);
  const f = filter.trim();
  if (f === '.') return input;
  if (f === 'length') {
    if (Array.isArray(input) || typeof input === 'string') return input.length;
    if (input && typeof input === 'object') return Object.keys(input).length;
    throw new Error(`length of ${JSON.stringify(input)}`);
  }
  if (/^\.[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$/.test(f)) {
    return f
      .slice(1)
      .split('.')
      .reduce<unknown>(
        (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : null),
        input,
      );
  }
  const map = /^map\((.*)\)$/s.exec(f);
  if (map) {
    if (!Array.isArray(input)) throw new Error(`map over ${JSON.stringify(input)}`);
    return input.map((v) => jq(map[1] as string, v));
  }
  if (f.startsWith('{') && f.endsWith('}')) {
    const out: Record<string, unknown> = {};
    for (const member of splitTop(f.slice(1, -1), ',')) {
      const colon = member.indexOf(':');
      const key = (colon < 0 ? member : member.slice(0, colon)).trim();
      out[key] = jq(colon < 0 ? `.${key}` : member.slice(colon + 1), input);
    }
    return out;
  }
  throw new Error(`jq filter "${f}" is not read by this test`);
}

function splitTop(text: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '{' || c === '[') depth++;
    else if (c === ')' || c === '}' || c === ']') depth--;
    else if (c === sep && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out;
}

/** jq's options and filter from its words (`jq` first). */
export function jqStage(argv: string[]): { raw: boolean; filter: string } {
  if (argv[0] !== 'jq') throw new Error(`the tour pipes into jq, not ${argv[0]}`);
  let raw = false;
  let filter: string | undefined;
  for (const arg of argv.slice(1)) {
    if (arg === '-r') raw = true;
    else if (arg === '-c') continue;
    else if (arg.startsWith('-')) throw new Error(`jq option ${arg} is not read by this test`);
    else if (filter === undefined) filter = arg;
    else throw new Error(`jq reads no files here: ${arg}`);
  }
  return { raw, filter: filter ?? '.' };
}

/**
 * Whether `actual` is what the README shows: equal, except that a string with `…` in the README
 * matches any text in its place.
 */
export function matches(actual: unknown, shown: unknown): boolean {
  if (typeof shown === 'string') {
    if (typeof actual !== 'string') return false;
    if (!shown.includes('…')) return actual === shown;
    const pattern = shown
      .split('…')
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    return new RegExp(`^${pattern}$`, 's').test(actual);
  }
  if (Array.isArray(shown)) {
    return (
      Array.isArray(actual) && actual.length === shown.length && shown.every((s, i) => matches(actual[i], s))
    );
  }
  if (shown && typeof shown === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const a = actual as Record<string, unknown>;
    const s = shown as Record<string, unknown>;
    const keys = Object.keys(s);
    return keys.length === Object.keys(a).length && keys.every((k) => k in a && matches(a[k], s[k]));
  }
  return Object.is(actual, shown);
}
