// Writes src/pages/assets/favicon.ico from the shapes of favicon.svg beside it (a "K" on the pages'
// brand blue): a 32 × 32 PNG inside an ICO, for the clients that ask for /favicon.ico instead of
// reading the pages' <link rel="icon">. Run by hand after changing the icon: node scripts/favicon.mjs
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const SIZE = 32;
const SAMPLES = 4;
const BLUE = [0x1d, 0x4e, 0xd8];
// favicon.svg's path, as a polygon.
const K = [
  [9, 6],
  [13.5, 6],
  [13.5, 14.3],
  [20.6, 6],
  [25.9, 6],
  [18.3, 14.6],
  [26.4, 26],
  [21, 26],
  [15.3, 17.9],
  [13.5, 19.9],
  [13.5, 26],
  [9, 26],
];

function inside(poly, x, y) {
  let hit = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i];
    const [xj, yj] = poly[j];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) hit = !hit;
  }
  return hit;
}

/** Inside the rounded square of radius 7. */
function inSquare(x, y) {
  const r = 7;
  const cx = Math.min(Math.max(x, r), SIZE - r);
  const cy = Math.min(Math.max(y, r), SIZE - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
}

const rows = [];
for (let py = 0; py < SIZE; py++) {
  const row = [0]; // PNG filter: none
  for (let px = 0; px < SIZE; px++) {
    let square = 0;
    let letter = 0;
    for (let sy = 0; sy < SAMPLES; sy++)
      for (let sx = 0; sx < SAMPLES; sx++) {
        const x = px + (sx + 0.5) / SAMPLES;
        const y = py + (sy + 0.5) / SAMPLES;
        if (inSquare(x, y)) {
          square++;
          if (inside(K, x, y)) letter++;
        }
      }
    const white = square ? letter / square : 0;
    const rgb = BLUE.map((c) => Math.round(c + (255 - c) * white));
    row.push(...rgb, Math.round((255 * square) / SAMPLES ** 2));
  }
  rows.push(Buffer.from(row));
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc = (buf) => {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const sum = Buffer.alloc(4);
  sum.writeUInt32BE(crc(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, sum]);
}
const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(SIZE, 0);
ihdr.writeUInt32BE(SIZE, 4);
ihdr.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', ihdr),
  chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })),
  chunk('IEND', Buffer.alloc(0)),
]);

// ICONDIR (6 bytes) + one ICONDIRENTRY (16 bytes), then the PNG.
const ico = Buffer.alloc(22);
ico.writeUInt16LE(0, 0);
ico.writeUInt16LE(1, 2); // icon
ico.writeUInt16LE(1, 4); // one image
ico.set([SIZE, SIZE, 0, 0], 6);
ico.writeUInt16LE(1, 10); // planes
ico.writeUInt16LE(32, 12); // bits per pixel
ico.writeUInt32LE(png.length, 14);
ico.writeUInt32LE(22, 18);
writeFileSync(new URL('../src/pages/assets/favicon.ico', import.meta.url), Buffer.concat([ico, png]));
