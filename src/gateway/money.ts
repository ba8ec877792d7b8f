/**
 * The gateway's second face: its client, through which money moves (payment, authorization,
 * capture, void, refund, credit) and cards are vaulted, in process or on another server
 * (GATEWAY_URL). Only the charging module may import it (`.dependency-cruiser.cjs`:
 * money-verbs-in-charging), so every charge, capture, void and refund has one owner and goes out
 * with its gateway idempotency key.
 */
export { type GatewayClient, type GatewayClientOptions, gatewayClient } from './client.js';
