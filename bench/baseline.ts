/**
 * The yardstick for Kopek's POST /customers: a bare Fastify route that does the irreducible work
 * (parse JSON, check email and ip, one INSERT into a table of the same shape through a pool of the
 * same size, answer 201 JSON) and nothing else: no auth, hooks, metrics, logging or schemas.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import Fastify from 'fastify';
import pg from 'pg';

const url = process.env.DATABASE_URL;
const port = Number(process.env.PORT ?? 0);
const shopId = Number(process.env.BASELINE_SHOP_ID ?? 1);
if (!url) throw new Error('DATABASE_URL is required');

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const isEmail = (v: string) => v.length <= 254 && /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(v);

function newId(): string {
  let out = 'cst_';
  for (const byte of randomBytes(24)) out += ALPHABET[byte % 62];
  return out;
}

// The same pool size Kopek takes from DATABASE_POOL_SIZE (and its default), so both hold as many connections.
const pool = new pg.Pool({ connectionString: url, max: Number(process.env.DATABASE_POOL_SIZE || 10) });
pool.on('error', () => {});

await pool.query(`CREATE TABLE IF NOT EXISTS baseline_customers (
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id text PRIMARY KEY,
  shop_id integer NOT NULL REFERENCES shops (id),
  first_name text, last_name text, address text, city text, country text, zip text, state text, phone text,
  email text NOT NULL,
  ip text NOT NULL,
  created_at timestamptz NOT NULL
)`);
await pool.query(
  'CREATE INDEX IF NOT EXISTS baseline_customers_shop_seq ON baseline_customers (shop_id, seq DESC)',
);

const app = Fastify({ logger: false });

app.get('/health', async () => ({ status: 'ok' }));

app.post('/customers', async (request, reply) => {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const errors: Record<string, string[]> = {};
  const { email, ip } = body;
  if (typeof email !== 'string' || email === '') errors.email = ["can't be blank"];
  else if (!isEmail(email)) errors.email = ['is invalid'];
  if (typeof ip !== 'string' || ip === '') errors.ip = ["can't be blank"];
  else if (isIP(ip) === 0) errors.ip = ['is invalid'];
  if (Object.keys(errors).length > 0) return reply.code(422).send({ message: 'Invalid', errors });
  // The same statement Kopek sends: every column, absent ones as NULL, the whole row back.
  const { rows } = await pool.query(
    `INSERT INTO baseline_customers (id, shop_id, first_name, last_name, address, city, country, zip, state, phone, email, ip, created_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13) RETURNING *`,
    [newId(), shopId, null, null, null, null, null, null, null, null, email, ip, new Date()],
  );
  const { seq: _seq, shop_id: _shop, created_at: _created, ...customer } = rows[0];
  return reply.code(201).send(customer);
});

const close = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.on('SIGTERM', () => void close());
process.on('SIGINT', () => void close());

await app.listen({ port, host: '127.0.0.1' });
