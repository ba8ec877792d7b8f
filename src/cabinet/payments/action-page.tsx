import type { TransactionAnswer } from '../../gateway/index.js';
import { currencyExponent, moneyText } from '../../money/currencies.js';
import { CsrfField, ErrorSummary, Field } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import type { Action } from './actions.js';
import { paymentTexts } from './texts.js';
import { amountInput } from './view.js';

/**
 * The two steps of an action on money: a form (amount, reason) that only asks, then a confirmation
 * saying exactly what will happen, whose POST carries the CSRF token and a one-time nonce.
 */

export interface ActionForm {
  action: Action;
  transaction: TransactionAnswer;
  /** The most this action may take: the authorized amount, or what is not yet refunded. */
  limit: number;
  amount: string;
  reason: string;
  /** Set on the confirmation step: the checked amount in minor units and the form's nonce. */
  confirm?: { minor: number; nonce: string } | undefined;
  errors?: { amount?: string | undefined; base?: string | undefined };
  available: boolean;
}

const TITLES = { capture: 'captureTitle', void: 'voidTitle', refund: 'refundTitle' } as const;
const INTROS = { capture: 'captureIntro', void: 'voidIntro', refund: 'refundIntro' } as const;
const CONFIRMS = { capture: 'confirmCapture', void: 'confirmVoid', refund: 'confirmRefund' } as const;

export function ActionPage({ cabinet, f }: { cabinet: CabinetContext; f: ActionForm }) {
  const t = paymentTexts(cabinet.lang);
  const tr = f.transaction;
  const back = `/cabinet/payments/${tr.uid}`;
  const self = `${back}/${f.action}`;
  const money = (minor: number) => moneyText(minor, tr.currency, cabinet.lang);
  const title = fill(t[TITLES[f.action]], { amount: money(tr.amount) });
  const problems = [f.errors?.base, f.errors?.amount].filter((e): e is string => Boolean(e));
  const shown = f.confirm?.minor ?? f.limit;
  const change = `${self}?${new URLSearchParams({ amount: f.amount, reason: f.reason })}`;
  return (
    <CabinetPage cabinet={cabinet} title={title} section="payments">
      <p>
        <a href={back}>{t.backTo}</a>
      </p>
      <ErrorSummary title={t.problem} errors={problems} />
      {!f.available && problems.length === 0 && <p class="notice failed">{t.notPossible}</p>}
      <p>{t[INTROS[f.action]]}</p>
      {f.action === 'void' || f.confirm ? (
        <form method="post" action={self} class="confirm">
          <CsrfField token={cabinet.csrf} />
          <input type="hidden" name="nonce" value={f.confirm?.nonce ?? ''} />
          {f.action !== 'void' && <input type="hidden" name="amount" value={f.amount} />}
          {f.action === 'refund' && <input type="hidden" name="reason" value={f.reason} />}
          <p class="question">
            <strong>{fill(t[CONFIRMS[f.action]], { amount: money(shown), uid: tr.uid })}</strong>
          </p>
          {f.action === 'refund' && f.reason && (
            <p>
              {t.reason}: {f.reason}
            </p>
          )}
          <p class="muted">{t.irreversible}</p>
          <p class="buttons">
            <button type="submit" class={f.action === 'capture' ? 'primary' : 'danger'}>
              {fill(t[`confirmButton_${f.action}`], { amount: money(shown) })}
            </button>{' '}
            {f.action !== 'void' && <a href={change}>{t.change}</a>} <a href={back}>{t.cancel}</a>
          </p>
        </form>
      ) : (
        <form method="get" action={self} class="action-form" novalidate>
          <input type="hidden" name="review" value="1" />
          <Field
            name="amount"
            label={t.amount}
            value={f.amount}
            inputmode="text"
            required
            size="short"
            error={f.errors?.amount}
            hint={fill(t.amountHint, { currency: tr.currency, limit: money(f.limit) })}
          />
          {f.action === 'refund' && (
            <Field
              name="reason"
              label={t.reason}
              value={f.reason}
              required
              maxLength={255}
              hint={t.reasonHint}
            />
          )}
          <p class="buttons">
            <button type="submit" class="primary">
              {t.review}
            </button>{' '}
            <a href={back}>{t.cancel}</a>
          </p>
        </form>
      )}
    </CabinetPage>
  );
}

/** The default amount of the form: the whole limit, as people write it. */
export const defaultAmount = (f: Pick<ActionForm, 'limit' | 'transaction'>): string =>
  amountInput(f.limit, f.transaction.currency);

export const decimalsOf = (currency: string): number => currencyExponent(currency);
