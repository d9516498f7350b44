// `:name` parameters in twin and scenario SQL become `$n` placeholders bound to values: never spliced.
// A small scanner rather than a regex, because `::casts`, quoted strings, quoted identifiers,
// comments and dollar-quoted bodies may all contain colons and semicolons that are not ours.

type Visit = (kind: 'code' | 'skip', start: number, end: number) => void;

/** Walks SQL text, reporting runs of plain code and runs to leave alone (strings, comments). */
function scan(sql: string, visit: Visit): void {
  let i = 0;
  let codeStart = 0;
  const flush = (end: number) => {
    if (end > codeStart) visit('code', codeStart, end);
  };
  while (i < sql.length) {
    const c = sql[i];
    const next = sql[i + 1];
    let end = -1;
    if (c === "'") {
      end = i + 1;
      while (end < sql.length) {
        if (sql[end] === "'" && sql[end + 1] === "'") end += 2;
        else if (sql[end] === '\\' && /[eE]/.test(sql[i - 1] ?? '')) end += 2;
        else if (sql[end] === "'") break;
        else end++;
      }
      end = Math.min(end + 1, sql.length);
    } else if (c === '"') {
      end = sql.indexOf('"', i + 1);
      while (end !== -1 && sql[end + 1] === '"') end = sql.indexOf('"', end + 2);
      end = end === -1 ? sql.length : end + 1;
    } else if (c === '-' && next === '-') {
      end = sql.indexOf('\n', i);
      end = end === -1 ? sql.length : end;
    } else if (c === '/' && next === '*') {
      let depth = 1;
      end = i + 2;
      while (end < sql.length && depth > 0) {
        const pair = sql.slice(end, end + 2);
        if (pair === '/*' || pair === '*/') {
          depth += pair === '/*' ? 1 : -1;
          end += 2;
        } else {
          end++;
        }
      }
    } else if (c === '$') {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (tag && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? '')) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        end = close === -1 ? sql.length : close + tag[0].length;
      }
    }
    if (end === -1) {
      i++;
      continue;
    }
    flush(i);
    visit('skip', i, end);
    i = end;
    codeStart = end;
  }
  flush(sql.length);
}

/** A statement with `:name` parameters converted to `$1..$n`, and the values to bind. */
export interface BoundStatement {
  text: string;
  /** Parameter names in `$n` order. */
  names: string[];
  /** Values from `args` in `$n` order (undefined becomes null). */
  values: unknown[];
}

/** Converts `:name` parameters to `$n` placeholders and collects their values from `args`. */
export function bindNamedParams(sql: string, args: Record<string, unknown> = {}): BoundStatement {
  const names: string[] = [];
  let text = '';
  scan(sql, (kind, start, end) => {
    const part = sql.slice(start, end);
    if (kind === 'skip') {
      text += part;
      return;
    }
    // `(?<!:)` keeps `x::int` a cast; a name must follow the single colon directly.
    text += part.replace(/(?<![:A-Za-z0-9_])(:)([A-Za-z_][A-Za-z0-9_]*)/g, (_m, _colon, name: string) => {
      let n = names.indexOf(name);
      if (n === -1) n = names.push(name) - 1;
      return `$${n + 1}`;
    });
  });
  return { text, names, values: names.map((n) => (args[n] === undefined ? null : args[n])) };
}

/** Splits SQL text into statements on `;` outside strings, comments and dollar quotes. */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let current = '';
  scan(sql, (kind, start, end) => {
    const part = sql.slice(start, end);
    if (kind === 'skip') {
      current += part;
      return;
    }
    const pieces = part.split(';');
    current += pieces[0];
    for (const piece of pieces.slice(1)) {
      out.push(current);
      current = piece;
    }
  });
  out.push(current);
  return out.map((s) => s.trim()).filter((s) => s.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, '').trim() !== '');
}
