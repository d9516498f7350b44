// Entry point of the stategate command.
import { main } from './main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`stategate: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
