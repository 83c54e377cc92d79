// What a client sends on one connection, cut into the protocol's messages: the store-traffic figure's
// wire count (bench/figures/store-traffic.mjs). Each parser is fed the client → server bytes of one
// connection in order and names every complete message it finds; `request` marks the ones the server
// answers (a round trip), the rest are counted apart (control frames, messages that get no answer).
// Only the framing is read, never the payload's meaning.

/** One message a client sent. */
export interface WireMessage {
  /** Protocol-level name: `Q`/`S` (PostgreSQL), `COM_QUERY` (MySQL), `EVALSHA` (Redis), `grpc-message` (etcd)… */
  label: string;
  /** The server answers it: one round trip. */
  request: boolean;
}

export interface WireParser {
  push(chunk: Buffer): WireMessage[];
}

export type WireProtocol = 'postgres' | 'mysql' | 'redis' | 'etcd';

export function wireParser(protocol: WireProtocol): WireParser {
  switch (protocol) {
    case 'postgres':
      return new PostgresParser();
    case 'mysql':
      return new MySqlParser();
    case 'redis':
      return new RedisParser();
    case 'etcd':
      return new Http2GrpcParser();
  }
}

/** What each parser states as its request, for the results file and the docs. */
export const REQUEST_DEFINITIONS: Record<WireProtocol, string> = {
  postgres:
    'frontend messages Sync and Query (one round trip each; a statement sent as Parse/Bind/Describe/Execute/Sync is one)',
  mysql: 'command packets (sequence 0) that get an answer: all but COM_QUIT, COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA',
  redis: 'RESP commands (each gets a reply; commands written together still count one each)',
  etcd: 'gRPC messages from the client: one per unary call, one per message on a stream (watch, keep-alive); HTTP/2 PING/SETTINGS/WINDOW_UPDATE counted apart',
};

/** Bytes not yet cut into messages. */
class Pending {
  private buffer: Buffer = Buffer.alloc(0);

  add(chunk: Buffer): Buffer {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    return this.buffer;
  }

  consumed(bytes: number): Buffer {
    this.buffer = this.buffer.subarray(bytes);
    return this.buffer;
  }
}

const PG_PROTOCOL_3 = 196_608;
const PG_REQUESTS = new Set(['Q', 'S']);

/**
 * PostgreSQL frontend: untyped startup packets (SSLRequest, GSSENCRequest, StartupMessage) until
 * the StartupMessage, then typed messages (a type byte, an Int32 length that counts itself).
 */
class PostgresParser implements WireParser {
  private readonly pending = new Pending();
  private startup = true;

  push(chunk: Buffer): WireMessage[] {
    const out: WireMessage[] = [];
    let buffer = this.pending.add(chunk);
    for (;;) {
      if (this.startup) {
        if (buffer.length < 8) break;
        const length = buffer.readInt32BE(0);
        if (buffer.length < length) break;
        const code = buffer.readInt32BE(4);
        if (code === PG_PROTOCOL_3) this.startup = false;
        out.push({ label: code === PG_PROTOCOL_3 ? 'startup' : `startup:${code}`, request: false });
        buffer = this.pending.consumed(length);
        continue;
      }
      if (buffer.length < 5) break;
      const length = buffer.readInt32BE(1);
      if (buffer.length < 1 + length) break;
      const type = String.fromCharCode(buffer[0] as number);
      out.push({ label: type, request: PG_REQUESTS.has(type) });
      buffer = this.pending.consumed(1 + length);
    }
    return out;
  }
}

const MYSQL_COMMANDS: Record<number, string> = {
  1: 'COM_QUIT',
  2: 'COM_INIT_DB',
  3: 'COM_QUERY',
  14: 'COM_PING',
  17: 'COM_CHANGE_USER',
  22: 'COM_STMT_PREPARE',
  23: 'COM_STMT_EXECUTE',
  24: 'COM_STMT_SEND_LONG_DATA',
  25: 'COM_STMT_CLOSE',
  26: 'COM_STMT_RESET',
  31: 'COM_RESET_CONNECTION',
};
/** Commands the server does not answer. */
const MYSQL_UNANSWERED = new Set([0x01, 0x18, 0x19]);

/**
 * MySQL/MariaDB client packets: a 3-byte length, a sequence id, the payload. A command starts a new
 * sequence (id 0); the handshake response and auth packets continue the server's (id ≥ 1).
 */
class MySqlParser implements WireParser {
  private readonly pending = new Pending();

  push(chunk: Buffer): WireMessage[] {
    const out: WireMessage[] = [];
    let buffer = this.pending.add(chunk);
    while (buffer.length >= 4) {
      const length = buffer.readUIntLE(0, 3);
      if (buffer.length < 4 + length) break;
      const sequence = buffer[3];
      const command = buffer[4] as number;
      if (sequence === 0 && length > 0) {
        out.push({
          label: MYSQL_COMMANDS[command] ?? `COM_0x${command.toString(16)}`,
          request: !MYSQL_UNANSWERED.has(command),
        });
      } else {
        out.push({ label: 'handshake', request: false });
      }
      buffer = this.pending.consumed(4 + length);
    }
    return out;
  }
}

const CRLF = Buffer.from('\r\n');

/** Redis RESP: each command an array of bulk strings (`*n`, then n × `$len` + bytes); inline commands too. */
class RedisParser implements WireParser {
  private readonly pending = new Pending();

  push(chunk: Buffer): WireMessage[] {
    const out: WireMessage[] = [];
    let buffer = this.pending.add(chunk);
    for (;;) {
      const command = parseRespCommand(buffer);
      if (!command) break;
      out.push({ label: command.name, request: true });
      buffer = this.pending.consumed(command.end);
    }
    return out;
  }
}

function parseRespCommand(buffer: Buffer): { name: string; end: number } | undefined {
  const lineEnd = buffer.indexOf(CRLF);
  if (lineEnd < 0) return undefined;
  if (buffer[0] !== 0x2a) {
    // An inline command: one line of words.
    const name = buffer.toString('latin1', 0, lineEnd).trim().split(/\s+/)[0] ?? '';
    return { name: name.toUpperCase(), end: lineEnd + 2 };
  }
  const count = Number(buffer.toString('latin1', 1, lineEnd));
  let position = lineEnd + 2;
  let name = '';
  for (let i = 0; i < count; i++) {
    const end = buffer.indexOf(CRLF, position);
    if (end < 0) return undefined;
    const length = Number(buffer.toString('latin1', position + 1, end));
    const start = end + 2;
    if (buffer.length < start + length + 2) return undefined;
    if (i === 0) name = buffer.toString('latin1', start, start + length).toUpperCase();
    position = start + length + 2;
  }
  return { name, end: position };
}

const H2_PREFACE_LENGTH = 24;
const H2_FRAME_NAMES: Record<number, string> = {
  0: 'DATA',
  1: 'HEADERS',
  2: 'PRIORITY',
  3: 'RST_STREAM',
  4: 'SETTINGS',
  5: 'PUSH_PROMISE',
  6: 'PING',
  7: 'GOAWAY',
  8: 'WINDOW_UPDATE',
  9: 'CONTINUATION',
};
const FLAG_ACK = 0x1;
const FLAG_PADDED = 0x8;

/**
 * etcd's gRPC over cleartext HTTP/2: after the 24-byte preface, frames (3-byte length, type, flags,
 * stream id). A stream's HEADERS opens a call (`grpc-call`); the gRPC messages in its DATA frames (a
 * flag byte and a 4-byte length each, possibly split across frames) are the requests. The method
 * names sit in HPACK-compressed headers and are not decoded.
 */
class Http2GrpcParser implements WireParser {
  private readonly pending = new Pending();
  private preface = true;
  /** Per client stream, the bytes of a gRPC message not yet complete. */
  private readonly streams = new Map<number, Buffer>();

  push(chunk: Buffer): WireMessage[] {
    const out: WireMessage[] = [];
    let buffer = this.pending.add(chunk);
    if (this.preface) {
      if (buffer.length < H2_PREFACE_LENGTH) return out;
      buffer = this.pending.consumed(H2_PREFACE_LENGTH);
      this.preface = false;
    }
    while (buffer.length >= 9) {
      const length = buffer.readUIntBE(0, 3);
      if (buffer.length < 9 + length) break;
      const type = buffer[3] as number;
      const flags = buffer[4] as number;
      const stream = buffer.readUInt32BE(5) & 0x7fff_ffff;
      const payload = buffer.subarray(9, 9 + length);
      if (type === 1 && !this.streams.has(stream)) {
        this.streams.set(stream, Buffer.alloc(0));
        out.push({ label: 'grpc-call', request: false });
      } else if (type === 0) {
        out.push(...this.data(stream, flags, payload));
      } else if (type !== 1) {
        const ack = (type === 4 || type === 6) && (flags & FLAG_ACK) !== 0;
        out.push({ label: `${H2_FRAME_NAMES[type] ?? `frame-${type}`}${ack ? '-ACK' : ''}`, request: false });
      }
      buffer = this.pending.consumed(9 + length);
    }
    return out;
  }

  private data(stream: number, flags: number, payload: Buffer): WireMessage[] {
    let body = payload;
    if ((flags & FLAG_PADDED) !== 0) body = payload.subarray(1, payload.length - (payload[0] as number));
    let pending = Buffer.concat([this.streams.get(stream) ?? Buffer.alloc(0), body]);
    const out: WireMessage[] = [];
    while (pending.length >= 5) {
      const length = pending.readUInt32BE(1);
      if (pending.length < 5 + length) break;
      out.push({ label: 'grpc-message', request: true });
      pending = pending.subarray(5 + length);
    }
    this.streams.set(stream, pending);
    return out;
  }
}
