/**
 * The one error type of Kopek's API. A verb throws it; one handler turns it into the contract's
 * `{message, errors}` body (decisions.md), so the shape is decided in exactly one place.
 */

/** `errors`: field → messages, `base` → messages, nested resource → the same shape again. */
export interface ErrorTree {
  [field: string]: string[] | ErrorTree;
}

export type ErrorCode =
  | 'validation'
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'malformed_id'
  | 'internal';

export function codeToStatus(code: ErrorCode): number {
  switch (code) {
    case 'validation':
      return 422;
    case 'bad_request':
      return 400;
    case 'unauthorized':
      return 401;
    case 'forbidden':
      return 403;
    case 'not_found':
      return 404;
    case 'method_not_allowed':
      return 405;
    case 'conflict':
      return 409;
    case 'payload_too_large':
      return 413;
    case 'uri_too_long':
      return 414;
    case 'unsupported_media_type':
      return 415;
    case 'rate_limited':
      return 429;
    // The seed answers a product lookup with bad parameters with 302 and an error body.
    case 'malformed_id':
      return 302;
    case 'internal':
      return 500;
  }
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly errors: ErrorTree,
    message?: string,
  ) {
    super(message ?? sentence(errors));
    this.status = codeToStatus(code);
  }

  static validation(errors: ErrorTree): ApiError {
    return new ApiError('validation', errors);
  }
  static base(code: ErrorCode, message: string): ApiError {
    return new ApiError(code, { base: [message] });
  }
  static notFound(message = 'Record not found'): ApiError {
    return ApiError.base('not_found', message);
  }

  toBody(): ErrorBody {
    return { message: this.message, errors: this.errors };
  }
}

export interface ErrorBody {
  message: string;
  errors: ErrorTree;
}

function humanize(path: string[]): string {
  const words = path
    .filter((p) => p !== 'base')
    .join(' ')
    .replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function flatten(tree: ErrorTree, path: string[] = []): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(tree)) {
    const here = [...path, key];
    if (Array.isArray(value)) {
      // Messages not tied to a field (`base`, at any depth) stand alone, capitalised: errors.plan.base
      // already names its subject ("plan with this ID ..."), so no "Plan plan with this ID ...".
      const subject = key === 'base' ? '' : humanize(here);
      for (const msg of value)
        out.push(subject ? `${subject} ${msg}` : msg.charAt(0).toUpperCase() + msg.slice(1));
    } else {
      out.push(...flatten(value, here));
    }
  }
  return out;
}

/** Joins every message into one sentence: "Email is invalid and Ip can't be blank". */
export function sentence(errors: ErrorTree): string {
  const parts = flatten(errors);
  if (parts.length === 0) return 'Invalid request';
  if (parts.length === 1) return parts[0] as string;
  if (parts.length === 2) return `${parts[0]} and ${parts[1]}`;
  return `${parts.slice(0, -1).join(', ')}, and ${parts.at(-1)}`;
}

/** Collects field errors while a verb validates its input, then throws them all at once. */
export class ErrorCollector {
  readonly tree: ErrorTree = {};

  add(path: string | string[], message: string): void {
    const keys = Array.isArray(path) ? path : [path];
    let node: ErrorTree = this.tree;
    for (const key of keys.slice(0, -1)) {
      const next = node[key];
      if (next === undefined || Array.isArray(next)) node[key] = {};
      node = node[key] as ErrorTree;
    }
    const last = keys.at(-1) as string;
    const list = node[last];
    if (Array.isArray(list)) {
      if (!list.includes(message)) list.push(message);
    } else node[last] = [message];
  }

  has(path: string): boolean {
    return path in this.tree;
  }

  get empty(): boolean {
    return Object.keys(this.tree).length === 0;
  }

  throwIfAny(): void {
    if (!this.empty) throw ApiError.validation(this.tree);
  }
}
