// The action's orchestration: inputs, engine, posting, outputs.
export async function run(): Promise<void> {
  process.exitCode = 1;
}
