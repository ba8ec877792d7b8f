import { moneyText } from '../../money/currencies.js';
import { Money } from '../../pages/components.js';
import type { PageLang } from '../../pages/lang.js';

/**
 * A bar chart of one currency's revenue per day, as inline SVG drawn on the server: no script, no
 * inline style (the CSP forbids both), sizes as SVG attributes. Screen readers get the title and a
 * table of the same numbers beside it.
 */

export interface ChartDay {
  /** The label under the bar (a day of the month) and its full name (the date). */
  label: string;
  date: string;
  revenue: number;
  paid: number;
  failed: number;
}

const WIDTH = 620;
const HEIGHT = 200;
const TOP = 30;
const BOTTOM = 24;
const LEFT = 8;

export interface RevenueChartProps {
  id: string;
  title: string;
  currency: string;
  days: ChartDay[];
  labels: { date: string; revenue: string; paid: string; failed: string; table: string };
  lang: PageLang;
}

export function RevenueChart({ id, title, currency, days, labels, lang }: RevenueChartProps) {
  const max = Math.max(1, ...days.map((d) => d.revenue));
  const slot = (WIDTH - LEFT * 2) / Math.max(1, days.length);
  const bar = Math.max(2, slot * 0.7);
  const plot = HEIGHT - TOP - BOTTOM;
  return (
    <figure class="revenue">
      <svg
        class="chart"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-labelledby={`${id}-title`}
        preserveAspectRatio="xMidYMid meet"
      >
        <title id={`${id}-title`}>{title}</title>
        <line x1={LEFT} x2={WIDTH - LEFT} y1={HEIGHT - BOTTOM} y2={HEIGHT - BOTTOM} stroke="#9aa5b1" />
        <text x={LEFT} y={TOP - 8} font-size="11" fill="#52606d">
          {moneyText(max === 1 && days.every((d) => d.revenue === 0) ? 0 : max, currency, lang)}
        </text>
        <line x1={LEFT} x2={WIDTH - LEFT} y1={TOP} y2={TOP} stroke="#e4e7eb" stroke-dasharray="4 4" />
        {days.map((d, i) => {
          const h = d.revenue === 0 ? 0 : Math.max(1, Math.round((d.revenue / max) * plot));
          const x = LEFT + i * slot + (slot - bar) / 2;
          return (
            <g>
              <rect
                x={x.toFixed(1)}
                y={HEIGHT - BOTTOM - h}
                width={bar.toFixed(1)}
                height={h}
                fill="#1d4ed8"
                rx="2"
              >
                <title>{`${d.date}: ${moneyText(d.revenue, currency, lang)}`}</title>
              </rect>
              {(i % 5 === 0 || i === days.length - 1) && (
                <text
                  x={(x + bar / 2).toFixed(1)}
                  y={HEIGHT - 6}
                  font-size="11"
                  text-anchor="middle"
                  fill="#52606d"
                >
                  {d.label}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <details class="chart-data">
        <summary>{labels.table}</summary>
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">{title}</caption>
            <thead>
              <tr>
                <th scope="col">{labels.date}</th>
                <th scope="col" class="num">
                  {labels.revenue}
                </th>
                <th scope="col" class="num">
                  {labels.paid}
                </th>
                <th scope="col" class="num">
                  {labels.failed}
                </th>
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr>
                  <th scope="row">{d.date}</th>
                  <td class="num">
                    <Money amount={d.revenue} currency={currency} lang={lang} />
                  </td>
                  <td class="num">{d.paid}</td>
                  <td class="num">{d.failed}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
