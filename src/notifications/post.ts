import { request } from 'undici';
import type { OutboundRules } from '../net/address-rules.js';
import { AddressRefused, closeOutboundAgents, type OutboundNet, outboundAgent } from '../net/outbound.js';

/**
 * One POST of a notification, outside any database transaction: its answer (status, the first
 * KiB of the body) or what went wrong, never a thrown error. Redirects are not followed (a 3xx is an
 * answer like any other non-2xx), and the whole exchange has one deadline.
 */

export interface Outgoing {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** Which addresses it may reach: the shop's kind, the store, the operator's KOPEK_OUTBOUND_ALLOW. */
  rules: OutboundRules;
  /** The resolver and connector (tests give their own); the system's by default. */
  net?: OutboundNet;
  timeoutMs: number;
}

export interface Outcome {
  /** The HTTP status, or null when no answer came. */
  statusCode: number | null;
  durationMs: number;
  /** The first KiB of the answer's body. */
  response: string | null;
  /** Why no answer came: refused address, timeout, connection refused or reset. */
  error: string | null;
}

export const RESPONSE_KEPT_BYTES = 1024;

/** Closes the connections kept alive to receivers (at shutdown). */
export const closeNotificationAgents = closeOutboundAgents;

function target(url: string): URL {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
  // Credentials in the URL are not sent: the Authorization header carries the shop's own.
  u.username = '';
  u.password = '';
  u.hash = '';
  return u;
}

/** Text PostgreSQL can store: the first KiB as UTF-8 (a cut character becomes U+FFFD), no NULs. */
function kept(chunks: Buffer[]): string {
  return Buffer.concat(chunks).subarray(0, RESPONSE_KEPT_BYTES).toString('utf8').replaceAll('\u0000', '');
}

function describe(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (err instanceof AddressRefused) return err.message;
  if (timedOut) return `timed out after ${timeoutMs / 1000} s`;
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const cause = e.cause && typeof e.cause === 'object' ? e.cause : undefined;
  if (cause && cause instanceof AddressRefused) return cause.message;
  const code = typeof e.code === 'string' ? e.code : typeof cause?.code === 'string' ? cause.code : undefined;
  const message = String(cause?.message ?? e.message ?? err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

export async function postNotification(out: Outgoing): Promise<Outcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = target(out.url);
  } catch {
    return {
      statusCode: null,
      durationMs: 0,
      response: null,
      error: 'the URL is not an absolute http(s) URL',
    };
  }
  // A timer cleared as soon as the exchange ends. AbortSignal.timeout's is never cleared: 10 s after
  // every notification it fired and aborted the finished request's signal with a new DOMException
  // (about 2 % of a deliverer's profile).
  const controller = new AbortController();
  const { signal } = controller;
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    out.timeoutMs,
  );
  // Known once the headers are in: a 2xx whose body then stalls was still received.
  let statusCode: number | null = null;
  const chunks: Buffer[] = [];
  try {
    // The agent judges every address before it connects (refused: AddressRefused, no connection).
    const res = await request(url, {
      dispatcher: outboundAgent(out.rules, out.net),
      method: 'POST',
      headers: out.headers,
      body: out.body,
      signal,
    });
    statusCode = res.statusCode;
    let size = 0;
    // Leaving the loop early closes the body: a receiver's long answer is not read to its end.
    for await (const chunk of res.body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= RESPONSE_KEPT_BYTES) break;
    }
    return { statusCode, durationMs: elapsed(), response: kept(chunks), error: null };
  } catch (err) {
    return {
      statusCode,
      durationMs: elapsed(),
      response: statusCode === null ? null : kept(chunks),
      error: describe(err, signal.aborted, out.timeoutMs),
    };
  } finally {
    clearTimeout(timer);
  }
}
