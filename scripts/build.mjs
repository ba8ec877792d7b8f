// `npm run build`: Kopek's program, bundled into dist/, with the files that ship beside it.
//
// One bundle (esbuild) instead of the ~400 modules TypeScript would emit: a `kopek` process spent
// most of its start loading modules (Node 20 resolves, reads and compiles each one; a serving
// process on PostgreSQL 2.1 s of CPU to answer /health, 1.5 s bundled). What a command loads only
// when asked (the server, the store, mail, Redis) stays a chunk of its own, loaded when asked.
// Types are checked by `npm run typecheck` (tsc), not here.
//
// Dependencies are bundled too, except those that find files of their own beside their code
// (PGlite's WebAssembly, the thread files of piscina and pino, Swagger's package.json and UI pages) and those
// loaded only when configured (ioredis, nodemailer, pg-native).
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;

const EXTERNAL = [
  '@electric-sql/pglite',
  '@fastify/swagger',
  '@fastify/swagger-ui',
  '@fastify/static',
  'piscina',
  'pino',
  'ioredis',
  'nodemailer',
  'pg-native',
];

rmSync(dist, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: ['src/cli.ts'],
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  tsconfig: 'tsconfig.build.json',
  external: EXTERNAL,
  // Bundled CommonJS packages require Node's own modules; an ES module has no `require` of its own.
  banner: {
    js: "import { createRequire as __kopekRequire } from 'node:module';\nconst require = __kopekRequire(import.meta.url);",
  },
  // At the top of dist/ with the entry, so that src/code-root.ts means dist/ in every one of them.
  chunkNames: '[name]-[hash]',
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
});
// Beside the code, where src/code-root.ts finds them.
cpSync(`${root}src/db/migrations`, `${dist}/db/migrations`, { recursive: true });
cpSync(`${root}src/pages/assets`, `${dist}/pages/assets`, { recursive: true });
cpSync(`${root}src/notifications/signing-thread.mjs`, `${dist}/notifications/signing-thread.mjs`);
// Last: dist/ is complete (bin/kopek.js and the tests' set-up read it).
writeFileSync(`${dist}/.build-stamp`, '');
