/**
 * The billing feature's face: what other features may use of it. The control socket runs a renewal
 * pass (`billDue`) and, with the cabinet, reads, advances and resets a test shop's clock; the CLI prints
 * what they answer. Nothing else of `billing/` is for use outside it (the composition root aside).
 */
export { type BillingSummary, billDue } from './renew.js';
export { type AdvanceSummary, advanceTestClock, readTestClock, type TestClockView } from './test-clock.js';
export { type ResetSummary, resetTestShop } from './test-clock-reset.js';
