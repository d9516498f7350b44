// GitHub markdown tables, shared by the report's sections.

/** A GitHub markdown table of cells already escaped. */
export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
