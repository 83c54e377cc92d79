/** Where a command writes: stdout and stderr of the process, or arrays in a test. */
export interface CliOutput {
  /** One line (or block) of the command's result; a newline is added. */
  out(text: string): void;
  /** One diagnostic line; a newline is added. */
  err(text: string): void;
  /** A terminal: `status --watch` then redraws in place instead of appending. */
  readonly isTTY?: boolean;
}

const SECRET_KEY = /key|signature|sig|password|secret|token/i;
const REDACTED = '***';

/**
 * `output` with every piece of `connection` that could be a secret replaced by `***` — the whole
 * value, a URL's password, an `AccountKey=`/`SharedAccessSignature=` value. The stores already keep
 * secrets out of their errors and the CLI's own messages name options, never values; this is the
 * last line of defence for a driver message nobody foresaw.
 */
export function redactingOutput(output: CliOutput, connection: string | undefined): CliOutput {
  const secrets = secretsIn(connection);
  if (secrets.length === 0) return output;
  const redact = (text: string) => secrets.reduce((result, secret) => result.split(secret).join(REDACTED), text);
  return {
    out: (text) => output.out(redact(text)),
    err: (text) => output.err(redact(text)),
    isTTY: output.isTTY,
  };
}

function secretsIn(connection: string | undefined): string[] {
  if (!connection) return [];
  const found = new Set<string>([connection]);
  const add = (secret: string) => {
    found.add(secret);
    try {
      found.add(decodeURIComponent(secret));
    } catch {
      // Not percent-encoded after all: the raw value is enough.
    }
  };
  // `;` separates Azure connection-string fields, `,` etcd endpoints, `&` the fields of a SAS.
  for (const part of connection.split(/[;,\s]/)) {
    let url: URL | undefined;
    try {
      url = new URL(part);
    } catch {
      // A connection-string field, not a URL.
    }
    if (url?.password) add(url.password);
    const fields = url ? url.search.slice(1) : part;
    for (const field of [part, ...fields.split('&')]) {
      const equals = field.indexOf('=');
      if (equals > 0 && SECRET_KEY.test(field.slice(0, equals))) add(field.slice(equals + 1));
    }
  }
  // Longest first, so a secret containing another is replaced whole; tiny values would mangle output.
  return [...found].filter((secret) => secret.length >= 4).sort((a, b) => b.length - a.length);
}
