/**
 * CSV as spreadsheets write it (RFC 4180): fields separated by commas (or semicolons, when the header uses them),
 * optionally quoted with `"` (a doubled `""` inside quotes is one quote), CRLF or LF line ends, a UTF-8 BOM ignored.
 * Each record keeps the line it started on, for error messages.
 */
export interface CsvRecord {
  line: number;
  fields: string[];
}

export class CsvError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

/** The separator of the first line: `;` when it has more semicolons than commas outside quotes, else `,`. */
function separatorOf(text: string): string {
  const first = text.slice(0, text.search(/\r?\n|$/));
  const outside = first.replace(/"[^"]*"/g, '');
  return (outside.match(/;/g)?.length ?? 0) > (outside.match(/,/g)?.length ?? 0) ? ';' : ',';
}

export function parseCsv(input: string): CsvRecord[] {
  const text = input.replace(/^\uFEFF/, '');
  const sep = separatorOf(text);
  const records: CsvRecord[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      let value = '';
      if (text[i] === '"') {
        i++;
        for (;;) {
          if (i >= text.length) throw new CsvError(start, 'a quoted field is not closed');
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') {
              value += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === '\n') line++;
          value += c;
          i++;
        }
        // after a closing quote: only a separator or the end of the record may follow (spaces are tolerated)
        while (text[i] === ' ' || text[i] === '\t') i++;
        if (i < text.length && text[i] !== sep && text[i] !== '\n' && text[i] !== '\r') {
          throw new CsvError(line, 'unexpected text after a closing quote');
        }
      } else {
        while (i < text.length && text[i] !== sep && text[i] !== '\n' && text[i] !== '\r') value += text[i++];
      }
      fields.push(value);
      if (text[i] === sep) {
        i++;
        continue;
      }
      break;
    }
    if (text[i] === '\r') i++;
    if (text[i] === '\n') i++;
    line++;
    // blank lines are skipped
    if (!(fields.length === 1 && fields[0]!.trim() === '')) records.push({ line: start, fields });
  }
  return records;
}

/** One CSV field as spreadsheets read it: quoted when it holds a separator, a quote or a line end. */
export function csvField(value: string): string {
  return /[",;\r\n]/.test(value) || /^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Rows as CSV text (RFC 4180: comma separated, CRLF line ends), the inverse of parseCsv. */
export function toCsv(rows: readonly (readonly string[])[]): string {
  return rows.map((r) => r.map(csvField).join(',') + '\r\n').join('');
}
