import { createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pipelined } from '../../src/db/batch.js';
import { CoalescingSocket } from '../../src/db/postgres.js';

/**
 * The socket of Kopek's PostgreSQL connections sends what one tick wrote as one write: a pipelined
 * batch is one system call and one wake-up of PostgreSQL, not one per statement.
 */

/** Counts the writes that reach the operating system: one per call of _write or _writev. */
function countWrites(socket: Socket): { writes: number; chunks: number } {
  const seen = { writes: 0, chunks: 0 };
  const s = socket as unknown as {
    _write: (...a: unknown[]) => void;
    _writev: (chunks: unknown[], cb: unknown) => void;
  };
  const write = s._write.bind(socket);
  const writev = s._writev.bind(socket);
  s._write = (...a) => {
    seen.writes++;
    seen.chunks++;
    write(...a);
  };
  s._writev = (chunks, cb) => {
    seen.writes++;
    seen.chunks += chunks.length;
    writev(chunks, cb);
  };
  return seen;
}

describe('CoalescingSocket', () => {
  let server: Server;
  let received = '';
  let port = 0;
  // Told of each chunk the server receives.
  const listeners = new Set<() => void>();

  beforeAll(async () => {
    server = createServer((c) =>
      c.on('data', (d) => {
        received += d.toString();
        for (const listener of listeners) listener();
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const connected = async () => {
    const socket = new CoalescingSocket();
    await new Promise<void>((resolve) => socket.connect(port, '127.0.0.1', resolve));
    return socket;
  };
  /** Settles once the server has received `text` (on its data events, not on a timer). */
  const arrived = (text: string) =>
    new Promise<boolean>((resolve) => {
      const look = () => {
        if (!received.includes(text)) return;
        listeners.delete(look);
        resolve(true);
      };
      listeners.add(look);
      look();
    });

  it('sends the corked writes of one tick as one write, in order', async () => {
    const socket = await connected();
    const seen = countWrites(socket);
    for (const part of [['a', 'b'], ['c'], ['d', 'e']]) {
      socket.cork();
      for (const p of part) socket.write(p);
      socket.uncork();
    }
    expect(seen.writes).toBe(0);
    expect(await arrived('abcde')).toBe(true);
    expect(seen).toEqual({ writes: 1, chunks: 5 });
    socket.destroy();
  });

  it('sends the writes of a later tick in a write of their own', async () => {
    const socket = await connected();
    const seen = countWrites(socket);
    socket.cork();
    socket.write('1');
    socket.uncork();
    await new Promise((r) => setImmediate(r));
    socket.cork();
    socket.write('2');
    socket.uncork();
    expect(await arrived('12')).toBe(true);
    expect(seen.writes).toBe(2);
    socket.destroy();
  });

  it('sends an uncorked write at once, as a plain socket does', async () => {
    const socket = await connected();
    const seen = countWrites(socket);
    socket.write('x');
    expect(seen.writes).toBe(1);
    expect(await arrived('x')).toBe(true);
    socket.destroy();
  });
});

describe.runIf(process.env.DATABASE_URL)('a pipelined batch on PostgreSQL', () => {
  it('leaves in one write, BEGIN and COMMIT included, and answers every statement', async () => {
    let socket: CoalescingSocket | undefined;
    const client = new pg.Client({
      connectionString: process.env.DATABASE_URL,
      pipeline: true,
      stream: () => {
        socket = new CoalescingSocket();
        return socket;
      },
    });
    await client.connect();
    try {
      const seen = countWrites(socket as CoalescingSocket);
      const statements = [1, 2, 3, 4, 5].map((n) => ({ sql: 'SELECT $1::int * 2 AS v', params: [n] }));
      const rows = await pipelined(client, statements, { transaction: true, nameOf: () => undefined });
      expect(rows.map((r) => r[0]?.v)).toEqual([2, 4, 6, 8, 10]);
      expect(seen.writes).toBe(1);
    } finally {
      await client.end();
    }
  });
});
