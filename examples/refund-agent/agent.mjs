#!/usr/bin/env node
// The demo refund agent as a command: stdin {message, context}, tools over STATEGATE_TOOLS_URL, and
// one result line on stdout. Which version it is comes from manifest.json beside this file.
import { httpTools } from './http-tools.mjs';
import { loadManifest } from './manifest.mjs';
import { planRefund } from './planner.mjs';
import { parseInput, printResult, readStdin } from './protocol.mjs';

try {
  const toolsUrl = process.env.STATEGATE_TOOLS_URL;
  if (!toolsUrl) throw new Error('STATEGATE_TOOLS_URL is not set: run this agent under stategate');
  const { message, context } = parseInput(await readStdin());
  const directives = await loadManifest(new URL('.', import.meta.url));
  printResult(await planRefund({ message, context, directives, tools: httpTools(toolsUrl) }));
} catch (err) {
  process.stderr.write(`refund-agent: ${err.message}\n`);
  process.exitCode = 1;
}
