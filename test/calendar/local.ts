/** What a clock in `timeZone` shows at `d`, as "2026-02-28 20:00", read through Intl for the tests. */
export function local(d: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(d);
  const get = (type: string) => parts.find((p) => p.type === type)?.value;
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}`;
}

export const at = (iso: string) => new Date(iso);
export const iso = (d: Date) => d.toISOString();
