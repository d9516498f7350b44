// The stategate command: parses arguments and dispatches to the subcommands.
export async function main(argv: string[]): Promise<number> {
  process.stdout.write(`stategate: not yet implemented: ${argv.join(' ')}\n`);
  return 1;
}
