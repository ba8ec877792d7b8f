import { chmodSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './data-dir-mode.js';

/**
 * PGlite's directory store, with every file 0600 and every directory 0700. PostgreSQL inside PGlite
 * runs with its own umask of 022 and sets modes explicitly (the files of a new store are unpacked
 * and chmod-ed 0666, pg_internal.init is chmod-ed 0644), so the process umask alone does not keep
 * them private: the file system's chmod drops group and others' bits, and what it creates is made
 * private at once.
 */
export class PrivateNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: Parameters<NodeFS['init']>[1]) {
    const result = await super.init(pg, opts);
    const preRun = result.emscriptenOpts.preRun ?? [];
    result.emscriptenOpts.preRun = [(mod) => makePrivate(mod.NODEFS as unknown as NodeFsOps), ...preRun];
    return result;
  }
}

/** The parts of Emscripten's NODEFS changed here. */
interface NodeFsOps {
  doSetAttr?: (target: unknown, node: unknown, attr: { mode?: number }, ...rest: unknown[]) => void;
  realPath?: (node: unknown) => string;
  node_ops?: { mknod?: (parent: unknown, name: string, mode: number, dev: number) => unknown };
}

function makePrivate(fs: NodeFsOps): void {
  const setAttr = fs.doSetAttr;
  if (typeof setAttr === 'function') {
    fs.doSetAttr = function (target, node, attr, ...rest) {
      const mode = attr.mode === undefined ? attr : { ...attr, mode: attr.mode & ~0o077 };
      return setAttr.call(this, target, node, mode, ...rest);
    };
  }
  const ops = fs.node_ops;
  const mknod = ops?.mknod;
  const realPath = fs.realPath;
  if (ops && typeof mknod === 'function' && typeof realPath === 'function') {
    ops.mknod = function (parent, name, mode, dev) {
      const node = mknod.call(this, parent, name, mode, dev);
      const isDir = (mode & 0o170000) === 0o040000;
      chmodSync(realPath.call(fs, node), isDir ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE);
      return node;
    };
  }
}
