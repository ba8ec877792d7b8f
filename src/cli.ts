/**
 * The `kopek` command (bin/kopek.js and `npm start` run this file). Every command but `serve` is
 * runCli, which loads only what it needs; `serve` owns the process (signals, listening) and loads the
 * server only when asked for.
 */
import { type CliIo, reportError, runCli } from './cli/run.js';
import { loadConfig } from './config.js';

const io: CliIo = {
  out: (text) => console.log(text),
  err: (text) => console.error(text),
};

const argv = process.argv.slice(2);
if (argv[0] === 'serve') {
  try {
    const { serve } = await import('./cli/serve.js');
    await serve(loadConfig(), io);
  } catch (err) {
    process.exit(reportError(err, io));
  }
} else {
  process.exit(await runCli(argv, io));
}
