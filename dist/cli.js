import { createRequire as __sgCreateRequire } from 'node:module'; const require = __sgCreateRequire(import.meta.url);

// src/cli/main.ts
async function main(argv) {
  process.stdout.write(`stategate: not yet implemented: ${argv.join(" ")}
`);
  return 1;
}

// src/cli/index.ts
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`stategate: ${err instanceof Error ? err.message : String(err)}
`);
    process.exitCode = 1;
  }
);
