import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { inject } from 'vitest';
import type { Db } from '../src/db/db.js';
import { createPgliteDb, type PgliteDb } from '../src/db/pglite.js';
import { createPostgresDb } from '../src/db/postgres.js';
import { adminClient, createRunDatabase, databaseUrl } from './store-templates.js';

/**
 * Fresh stores for tests that need one of their own, made from what the run's set-up prepared
 * (test/store-templates.ts): an embedded store loaded from a data directory dumped once, a
 * PostgreSQL database copied from the migrated template. Each costs a fraction of a second.
 */
export interface FreshStore {
  db: Db;
  /** DATABASE_URL of its database, on PostgreSQL. */
  url: string | undefined;
  close(): Promise<void>;
}

export interface FreshOptions {
  /** false: a store that has never seen a migration (a test of migrating wants it so). */
  migrated?: boolean;
}

// Read once per worker; PGlite only reads a Blob, so one serves every store opened from it.
const snapshots = new Map<string, Blob>();
const archives = new Map<string, Buffer>();

function templatePath(migrated: boolean): string {
  return inject('storeTemplates').pglite[migrated ? 'migrated' : 'blank'];
}

function snapshot(migrated: boolean): Blob {
  const path = templatePath(migrated);
  let blob = snapshots.get(path);
  if (!blob) {
    blob = new Blob([new Uint8Array(archive(path))]);
    snapshots.set(path, blob);
  }
  return blob;
}

function archive(path: string): Buffer {
  let bytes = archives.get(path);
  if (!bytes) {
    bytes = readFileSync(path);
    archives.set(path, bytes);
  }
  return bytes;
}

/** An in-memory embedded store of its own, whatever store the run uses. */
export function freshPglite({ migrated = true }: FreshOptions = {}): Promise<PgliteDb> {
  return createPgliteDb(undefined, { loadDataDir: snapshot(migrated) });
}

/**
 * Writes the files of a data directory dumped by PGlite (a ustar archive of directories and files,
 * named from the data directory's root) under `dir`.
 */
export function untarDataDir(tar: Buffer, dir: string): void {
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) return;
    const text = (from: number, length: number) => {
      const bytes = header.subarray(from, from + length);
      const end = bytes.indexOf(0);
      return bytes.subarray(0, end < 0 ? length : end).toString('utf8');
    };
    const prefix = text(345, 155);
    const name = `${prefix ? `${prefix}/` : ''}${text(0, 100)}`;
    const mode = Number.parseInt(text(100, 8).trim() || '0', 8) & 0o777;
    const size = Number.parseInt(text(124, 12).trim() || '0', 8);
    const type = text(156, 1) || '0';
    const path = join(dir, name);
    if (relative(dir, path).startsWith('..')) throw new Error(`${name} is outside the data directory`);
    at += 512;
    if (type === '5') mkdirSync(path, { recursive: true, mode: mode || 0o700 });
    else if (type === '0') {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeFileSync(path, tar.subarray(at, at + size), { mode: mode || 0o600 });
    } else throw new Error(`${name}: a tar entry of type ${type}, which a PGlite dump does not hold`);
    at += Math.ceil(size / 512) * 512;
  }
}

/**
 * An embedded store's directory as `kopek serve` would have left it after its first start's migrations
 * (no shop yet): the migrated template's files written out, without starting a PGlite here. A first
 * start there skips creating the cluster.
 */
export async function seedPgliteDir(dir: string): Promise<void> {
  untarDataDir(archive(templatePath(true)), dir);
}

/**
 * The URL of a PostgreSQL database of its own (DATABASE_URL must be set): a copy of the run's migrated
 * template, or an empty one. The end of the run drops it.
 */
export async function freshPostgresUrl({ migrated = true }: FreshOptions = {}): Promise<string> {
  const base = process.env.DATABASE_URL;
  const pgTemplates = inject('storeTemplates').pg;
  if (!base || !pgTemplates) throw new Error('a PostgreSQL store needs DATABASE_URL');
  const name = `${pgTemplates.prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = await adminClient(base);
  try {
    await createRunDatabase(admin, name, migrated ? pgTemplates.template : 'template0');
  } finally {
    await admin.end();
  }
  return databaseUrl(base, name);
}

/** A PostgreSQL database of its own (freshPostgresUrl), with a pool on it. */
export async function freshPostgres(options: FreshOptions = {}, poolSize = 6): Promise<FreshStore> {
  const url = await freshPostgresUrl(options);
  const db = createPostgresDb(url, poolSize);
  return { db, url, close: () => db.close() };
}

/** A store of its own on the run's kind of store: PostgreSQL with DATABASE_URL, else embedded. */
export async function freshStore(options: FreshOptions = {}): Promise<FreshStore> {
  if (process.env.DATABASE_URL) return freshPostgres(options);
  const db = await freshPglite(options);
  return { db, url: undefined, close: () => db.close() };
}

/** DATABASE_URL of the store the run's test files share, on PostgreSQL. */
export function sharedStoreUrl(): string | undefined {
  return inject('storeTemplates').pg?.sharedUrl;
}
