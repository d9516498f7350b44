// The command side of the agent protocol: one JSON object on stdin, one result line on stdout.
// The whole contract: docs/agent-protocol.md.

/** Reads all of stdin as text. */
export async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses and checks the stdin object {message, context}; throws a message saying what is wrong. */
export function parseInput(text) {
  let input;
  try {
    input = JSON.parse(text);
  } catch (err) {
    throw new Error(`stdin is not one JSON object: ${err.message}`);
  }
  return checkInput(input);
}

/** Checks an episode request object; throws a message saying what is wrong. */
export function checkInput(input) {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw new Error('expected a JSON object');
  if (typeof input.message !== 'string') throw new Error('"message" must be a string');
  if (input.context !== undefined && (typeof input.context !== 'object' || input.context === null)) {
    throw new Error('"context" must be an object when given');
  }
  return { message: input.message, context: input.context ?? {} };
}

/** Prints the result object as the last line of stdout. */
export function printResult(result) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
