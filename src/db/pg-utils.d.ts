/** node-postgres's own conversion of a parameter to its wire text (Dates, arrays, objects, buffers). */
declare module 'pg/lib/utils.js' {
  export function prepareValue(value: unknown): string | Buffer | null;
}
