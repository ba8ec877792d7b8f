import type { CardRecord } from '../cards/index.js';
import { isoString } from '../clock.js';
import type { TransactionRow, TransactionStatus, TransactionType } from '../ledger/index.js';
import type { AvsCvcVerification, ThreeDSecureVerification } from './acquirer.js';
import type { BillingAddress, Customer } from './input.js';

/** The platform's transaction object, as `{"transaction": ...}` answers and notifications carry it. */

export const PROCESSED = 'Successfully processed';

/** The member named after the type (`payment`, `capture`, ...): the acquirer's own answer. */
export interface Section {
  status: TransactionStatus;
  message: string | null;
  ref_id: string | null;
  gateway_id: number | null;
  rrn: string | null;
  auth_code: string | null;
  bank_code: string | null;
  billing_descriptor: string | null;
  amount: number;
  currency: string;
}

export type GatewayType = Exclude<TransactionType, 'tokenization' | 'proof'>;

export interface TransactionAnswer {
  uid: string;
  status: TransactionStatus;
  message: string | null;
  amount: number;
  currency: string;
  description: string | null;
  type: GatewayType;
  payment_method_type: 'credit_card';
  tracking_id: string | null;
  test: boolean;
  language: string | null;
  created_at: string;
  updated_at: string;
  paid_at: string | null;
  expired_at: null;
  closed_at: null;
  settled_at: null;
  parent_uid?: string;
  reason?: string;
  credit_card: CardRecord | null;
  customer?: Customer;
  billing_address?: BillingAddress;
  additional_data: Record<string, unknown>;
  avs_cvc_verification?: AvsCvcVerification;
  three_d_secure_verification?: ThreeDSecureVerification;
  redirect_url?: string;
  payment?: Section;
  authorization?: Section;
  capture?: Section;
  void?: Section;
  refund?: Section;
  credit?: Section;
}

const APPROVED: Record<GatewayType, string> = {
  payment: 'Payment was approved',
  authorization: 'Authorization was approved',
  capture: 'Capture was approved',
  void: 'Void was approved',
  refund: 'Refund was approved',
  credit: 'Credit was approved',
};

// The platform's sandbox answers with these fixed acquirer references; shops' tests may expect them.
const SANDBOX_REFS = { ref_id: '777888', gateway_id: 1, rrn: '999', billing_descriptor: 'KOPEK SANDBOX' };

export type StoredSection = Omit<Section, 'amount' | 'currency'>;

/**
 * The acquirer's part of an answer. `acquirerAnswered` is false when the gateway itself refused the
 * request (a duplicate) or is still waiting (incomplete, pending): there are no references then.
 */
export function sectionFor(
  type: GatewayType,
  status: TransactionStatus,
  message: string | null,
  acquirerAnswered = true,
): StoredSection {
  const none = {
    ref_id: null,
    gateway_id: null,
    rrn: null,
    auth_code: null,
    bank_code: null,
    billing_descriptor: null,
  };
  if (!acquirerAnswered || status === 'incomplete' || status === 'pending')
    return { ...none, status, message };
  if (status === 'successful')
    return {
      ...none,
      ...SANDBOX_REFS,
      status,
      message: APPROVED[type],
      auth_code: '654321',
      bank_code: '00',
    };
  if (status === 'failed') return { ...none, ...SANDBOX_REFS, status, message, bank_code: '05' };
  return { ...none, status, message, gateway_id: SANDBOX_REFS.gateway_id };
}

const CHARGE_TYPES = new Set<string>(['payment', 'authorization', 'credit']);
const iso = (d: Date | null) => (d ? isoString(d) : null);

const NO_CUSTOMER: Customer = { ip: null, email: null, device_id: null, birth_date: null };
const NO_ADDRESS: BillingAddress = {
  first_name: null,
  last_name: null,
  address: null,
  country: null,
  city: null,
  zip: null,
  state: null,
  phone: null,
};

/** A ledger row in the protocol's shape; `gatewayUrl` builds the 3-D Secure redirect. */
export function toAnswer(row: TransactionRow, gatewayUrl: string): TransactionAnswer {
  const type = row.type as GatewayType;
  const details = row.details as {
    section?: StoredSection;
    additional_data?: Record<string, unknown>;
    reason?: string;
  };
  const answer: TransactionAnswer = {
    uid: row.uid,
    status: row.status,
    message: row.message,
    amount: row.amount,
    currency: row.currency,
    description: row.description,
    type,
    payment_method_type: 'credit_card',
    tracking_id: row.tracking_id,
    test: row.test,
    language: row.language,
    created_at: isoString(row.created_at),
    updated_at: isoString(row.updated_at),
    paid_at: iso(row.paid_at),
    expired_at: null,
    closed_at: null,
    settled_at: null,
    credit_card: (row.card as CardRecord | null) ?? null,
    additional_data: details.additional_data ?? {},
  };
  if (row.parent_uid) answer.parent_uid = row.parent_uid;
  if (details.reason !== undefined) answer.reason = details.reason;
  if (CHARGE_TYPES.has(type)) {
    answer.customer = (row.customer as Customer | null) ?? NO_CUSTOMER;
    answer.billing_address = (row.billing_address as BillingAddress | null) ?? NO_ADDRESS;
  }
  if (row.avs_cvc) answer.avs_cvc_verification = row.avs_cvc as unknown as AvsCvcVerification;
  if (row.three_d_secure)
    answer.three_d_secure_verification = row.three_d_secure as unknown as ThreeDSecureVerification;
  if (row.status === 'incomplete') answer.redirect_url = `${gatewayUrl}/process/${row.uid}`;
  const section = details.section ?? sectionFor(type, row.status, row.message);
  answer[type] = { ...section, amount: row.amount, currency: row.currency };
  return answer;
}
