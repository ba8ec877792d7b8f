/**
 * The ledger's face: what other features may use of the gateway's transactions table. The gateway
 * writes and reads its transactions through these (insert, status changes, locks, lookups by uid or
 * tracking id), proofs add theirs, and the cabinet's payments pages read a transaction, its children
 * and its history. Nothing else of `ledger/` is for use outside it (the composition root aside).
 */
export {
  changeStatus,
  childrenOf,
  findByTrackingId,
  findTransaction,
  findTransactionByUid,
  type HistoryEntry,
  historyOf,
  insertTransaction,
  lockTransaction,
  lockTransactionByUid,
  type NewTransaction,
  type StatusChange,
  storedTransactionRow,
  type TransactionRow,
  type TransactionStatus,
  type TransactionType,
  transactionInsert,
  transactionInsertCtes,
} from './repository.js';
