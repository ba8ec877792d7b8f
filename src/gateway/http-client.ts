import { Pool } from 'undici';
import type { CardRecord } from '../cards/index.js';
import { ApiError, type ErrorCode, type ErrorTree } from '../core/errors.js';
import type { TransactionAnswer } from './answer.js';
import type {
  CaptureRequest,
  ChargeRequest,
  CreditRequest,
  GatewayClient,
  RefundRequest,
  SendOptions,
  TokenizeRequest,
  VoidRequest,
} from './client-types.js';
import { GatewayInFlight, GatewayTimeout } from './errors.js';

/**
 * GatewayClient over HTTP, for a deployment whose GATEWAY_URL is another server: the platform's
 * protocol (`{"request": ...}` in, `{"transaction": ...}` out) with HTTP Basic as one shop. Answers
 * map to exactly what the in-process client resolves or throws (see GatewayClient), plus
 * GatewayHttpError for what is neither a transaction nor the caller's mistake.
 */

export interface HttpGatewayOptions {
  /** GATEWAY_URL: an origin, optionally with a path prefix. */
  url: string;
  shopId: number;
  /** The Basic password: the shop's secret key, or its service credential (service-credential.ts). */
  secret: string;
  /** The longest wait for the answer's headers, and then between parts of its body. Default 10 s. */
  timeoutMs?: number;
  /** The longest wait for a connection. Default 10 s. */
  connectTimeoutMs?: number;
}

/**
 * The gateway could not be reached, or answered something that is not a result: a 5xx other than
 * 504, refused credentials, an answer that is not the protocol's. Never a charge result. With
 * `status` set the request did arrive, so a charge's outcome is unknown: query by tracking_id before
 * charging again, as after a GatewayTimeout.
 */
export class GatewayHttpError extends Error {
  override readonly name = 'GatewayHttpError';
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
  }
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Failures before any byte of the request left: nothing can have been charged. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);
/** 4xx answers that are the request's own fault, as the in-process verbs throw them. */
const CALLER_ERRORS: Record<number, ErrorCode> = {
  400: 'bad_request',
  404: 'not_found',
  409: 'conflict',
  422: 'validation',
};

// One keep-alive pool per gateway origin for the whole process: clients are made per call, cheaply.
const pools = new Map<string, Pool>();

function poolFor(origin: string, connectTimeout: number): Pool {
  const key = `${origin} ${connectTimeout}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new Pool(origin, { connections: 32, connectTimeout, keepAliveTimeout: 10_000 });
    pools.set(key, pool);
  }
  return pool;
}

/** Closes every pool (at shutdown, and in tests); later clients open new ones. */
export async function closeGatewayPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((p) => p.close()));
}

interface Answer {
  status: number;
  body: unknown;
}

type Envelope = { response?: { message?: unknown; errors?: unknown; uid?: unknown } };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export class HttpGatewayClient implements GatewayClient {
  readonly #pool: Pool;
  readonly #prefix: string;
  readonly #origin: string;
  readonly #authorization: string;
  readonly #timeoutMs: number;
  readonly #shopId: number;

  constructor(options: HttpGatewayOptions) {
    const url = new URL(options.url);
    this.#origin = url.origin;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#pool = poolFor(url.origin, options.connectTimeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.#authorization = `Basic ${Buffer.from(`${options.shopId}:${options.secret}`).toString('base64')}`;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#shopId = options.shopId;
  }

  payment(request: ChargeRequest, options?: SendOptions) {
    return this.#transaction('/transactions/payments', request, options);
  }
  authorization(request: ChargeRequest, options?: SendOptions) {
    return this.#transaction('/transactions/authorizations', request, options);
  }
  capture(request: CaptureRequest, options?: SendOptions) {
    return this.#transaction('/transactions/captures', request, options);
  }
  void(request: VoidRequest, options?: SendOptions) {
    return this.#transaction('/transactions/voids', request, options);
  }
  refund(request: RefundRequest, options?: SendOptions) {
    return this.#transaction('/transactions/refunds', request, options);
  }
  credit(request: CreditRequest, options?: SendOptions) {
    return this.#transaction('/transactions/credits', request, options);
  }

  async tokenize(request: TokenizeRequest, options?: SendOptions): Promise<CardRecord> {
    const key = options?.idempotencyKey;
    const answer = await this.#call('POST', '/credit_cards', { request }, null, key);
    if (answer.status !== 200 || !isObject(answer.body) || typeof answer.body.token !== 'string')
      throw this.#failure(answer, null, key);
    return answer.body as unknown as CardRecord;
  }

  async query(uid: string): Promise<TransactionAnswer | undefined> {
    const answer = await this.#call('GET', `/transactions/${encodeURIComponent(uid)}`, undefined, null);
    if (answer.status === 404 && this.#isGatewayError(answer)) return undefined;
    return this.#transactionOf(answer, null);
  }

  async endThreeDSecure(uid: string): Promise<TransactionAnswer | undefined> {
    const path = `/process/${encodeURIComponent(uid)}/return`;
    const answer = await this.#call('POST', path, { outcome: 'cancelled' }, null);
    if (answer.status === 404 && this.#isGatewayError(answer)) return undefined;
    return this.#transactionOf(answer, null);
  }

  async queryByTrackingId(trackingId: string): Promise<TransactionAnswer[]> {
    const path = `/v2/transactions/tracking_id/${encodeURIComponent(trackingId)}`;
    const answer = await this.#call('GET', path, undefined, trackingId);
    const list = isObject(answer.body) ? answer.body.transactions : undefined;
    if (answer.status !== 200 || !Array.isArray(list)) throw this.#failure(answer, trackingId);
    return list as TransactionAnswer[];
  }

  async #transaction(
    path: string,
    request: { tracking_id?: string },
    options: SendOptions | undefined,
  ): Promise<TransactionAnswer> {
    const trackingId = request.tracking_id ?? null;
    const key = options?.idempotencyKey;
    return this.#transactionOf(await this.#call('POST', path, { request }, trackingId, key), trackingId, key);
  }

  #transactionOf(answer: Answer, trackingId: string | null, key?: string): TransactionAnswer {
    const transaction = isObject(answer.body) ? answer.body.transaction : undefined;
    if (answer.status !== 200 || !isObject(transaction) || typeof transaction.uid !== 'string')
      throw this.#failure(answer, trackingId, key);
    return transaction as unknown as TransactionAnswer;
  }

  async #call(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    trackingId: string | null,
    idempotencyKey?: string,
  ): Promise<Answer> {
    try {
      const res = await this.#pool.request({
        method,
        path: `${this.#prefix}${path}`,
        headers: {
          authorization: this.#authorization,
          accept: 'application/json',
          'user-agent': 'kopek-gateway-client',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      const text = await res.body.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: res.statusCode, body: parsed };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && NOT_SENT.has(code))
        throw new GatewayHttpError(
          `The gateway at ${this.#origin} could not be reached (${code})`,
          undefined,
        );
      // A timeout, or a connection lost after the request left: whether it was charged is unknown.
      throw new GatewayTimeout(undefined, trackingId);
    }
  }

  /** Errors in the gateway's own `{"response": ...}` shape, as opposed to a proxy's or a wrong path's. */
  #isGatewayError(answer: Answer): boolean {
    const response = (answer.body as Envelope | undefined)?.response;
    return isObject(answer.body) && isObject(response) && isObject(response.errors);
  }

  #failure(answer: Answer, trackingId: string | null, idempotencyKey?: string): Error {
    const { status } = answer;
    // With a key, 409 is the gateway's "still processing the first request with it": no answer yet,
    // never a refusal. (Without one, a 409 is the request's own conflict, as in-process.)
    if (status === 409 && idempotencyKey !== undefined)
      return new GatewayInFlight(idempotencyKey, trackingId);
    if (status === 504) {
      // Kopek's gateway names the pending transaction; a proxy's 504 does not.
      const response = isObject(answer.body) ? (answer.body as Envelope).response : undefined;
      const uid = isObject(response) && typeof response.uid === 'string' ? response.uid : undefined;
      return new GatewayTimeout(uid, trackingId);
    }
    const code = CALLER_ERRORS[status];
    if (code && this.#isGatewayError(answer)) {
      const response = (answer.body as Envelope).response as { message?: unknown; errors: ErrorTree };
      const message = typeof response.message === 'string' ? response.message : undefined;
      return new ApiError(code, response.errors, message);
    }
    if (status === 401 || status === 403)
      return new GatewayHttpError(
        `The gateway at ${this.#origin} refused the credentials of shop ${this.#shopId} (${status}): both deployments need the same GATEWAY_TOKEN, and the shop must exist on the gateway`,
        status,
      );
    if (status === 404)
      return new GatewayHttpError(`The gateway at ${this.#origin} has no such route: check GATEWAY_URL`, 404);
    return new GatewayHttpError(
      status === 200
        ? `The gateway at ${this.#origin} answered 200 without the expected body`
        : `The gateway at ${this.#origin} answered ${status}`,
      status,
    );
  }
}
