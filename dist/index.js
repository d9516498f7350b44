import { createRequire as __sgCreateRequire } from 'node:module'; const require = __sgCreateRequire(import.meta.url);

// src/action/main.ts
async function run() {
  process.exitCode = 1;
}

// src/action/index.ts
void run();
