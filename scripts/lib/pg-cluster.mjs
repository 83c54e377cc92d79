// @ts-check
// A fresh PostgreSQL primary and streaming standby on free loopback ports, in a temp folder: for the
// store-failover chaos spec and its bench (issue #30). Never touches the machine's own cluster.
// Uses the server binaries of Debian's postgresql package (/usr/lib/postgresql/<major>/bin), run as
// the `postgres` OS user when this process is root (initdb and postgres refuse root).
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, appendFile, chmod, chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.mjs';

const run = promisify(execFile);

/**
 * @typedef {object} PgNode
 * @property {'primary' | 'standby'} name what it was made as (the standby stays `standby` once promoted)
 * @property {number} port its loopback port
 * @property {string} url `postgres://postgres@127.0.0.1:<port>/postgres`
 */

/**
 * @typedef {object} PgCluster
 * @property {PgNode} primary
 * @property {PgNode} standby
 * @property {string} url both hosts, primary first, with `target_session_attrs=read-write` (libpq's form)
 * @property {(node: PgNode, mode?: 'immediate' | 'fast') => Promise<number>} stop stops a server
 *   (`immediate`: a crash, no shutdown checkpoint, WAL not yet sent is lost); resolves with when it began
 * @property {() => Promise<number>} promote `pg_ctl promote` of the standby, waiting until it accepts
 *   writes; resolves with when it did
 * @property {(sql: string, node?: PgNode) => Promise<string>} psql one statement's unaligned output
 * @property {() => Promise<void>} dispose stops both servers and removes the folder
 */

/**
 * Creates the primary (`initdb`, `wal_level=replica`, trust for 127.0.0.1 only, replication
 * included), takes the standby with `pg_basebackup -R` and starts it streaming. With `synchronous`,
 * the primary waits for the standby's flush of every commit (`synchronous_commit=on`,
 * `synchronous_standby_names='*'`); without, replication is asynchronous (PostgreSQL's default).
 * @param {{ synchronous?: boolean }} [options]
 * @returns {Promise<PgCluster>}
 */
export async function startPgCluster({ synchronous = false } = {}) {
  const bin = await postgresBin();
  const dir = await mkdtemp(join(tmpdir(), 'pg-failover-'));
  const asPostgres = userInfo().uid === 0;
  if (asPostgres) await chown(dir, ...(await postgresIds()));
  await chmod(dir, 0o700);
  /** @param {string} tool @param {string[]} args */
  const pg = (tool, args) =>
    asPostgres
      ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { cwd: dir })
      : run(join(bin, tool), args, { cwd: dir });
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  /** @type {(name: 'primary' | 'standby', port: number) => PgNode & { data: string }} */
  const node = (name, port) => ({
    name,
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    data: join(dir, name),
  });
  const primary = node('primary', primaryPort);
  const standby = node('standby', standbyPort);
  /** @type {Set<string>} */
  const running = new Set();
  /** @param {PgNode & { data: string }} n */
  const start = async (n) => {
    // The socket in our folder: the machine's cluster keeps /var/run/postgresql to itself.
    const options = `-c port=${n.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir}`;
    await pg('pg_ctl', ['start', '-w', '-t', '60', '-D', n.data, '-l', join(dir, `${n.name}.log`), '-o', options]);
    running.add(n.data);
  };
  const dispose = async () => {
    for (const data of running)
      await pg('pg_ctl', ['stop', '-m', 'immediate', '-w', '-D', data]).catch(() => undefined);
    running.clear();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await pg('initdb', ['-D', primary.data, '-U', 'postgres', '--auth=trust', '--no-sync', '--no-instructions']);
    // Loopback only, replication included (the standby streams as `postgres`).
    await appendFile(
      join(primary.data, 'pg_hba.conf'),
      '\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n',
    );
    const settings = [
      'wal_level = replica',
      'max_wal_senders = 4',
      'hot_standby = on',
      // A failover test, not a durability one: the machine does not crash, the server does.
      'fsync = off',
      'log_min_messages = warning',
      ...(synchronous ? ['synchronous_commit = on', "synchronous_standby_names = '*'"] : []),
    ];
    await appendFile(join(primary.data, 'postgresql.conf'), `\n${settings.join('\n')}\n`);
    await start(primary);
    await pg('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      standby.data,
      '-R',
      '-X',
      'stream',
      '--no-sync',
    ]);
    await start(standby);
    const cluster = {
      primary: { name: primary.name, port: primary.port, url: primary.url },
      standby: { name: standby.name, port: standby.port, url: standby.url },
      url: `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/postgres?target_session_attrs=read-write`,
      /** @type {PgCluster['psql']} */
      psql: async (sql, on = primary) => {
        const { stdout } = await pg('psql', [
          '-h',
          '127.0.0.1',
          '-p',
          String(on.port),
          '-U',
          'postgres',
          '-d',
          'postgres',
          '-XAtc',
          sql,
        ]);
        return stdout.trim();
      },
      /** @type {PgCluster['stop']} */
      stop: async (n, mode = 'immediate') => {
        const data = n.name === 'primary' ? primary.data : standby.data;
        const at = Date.now();
        await pg('pg_ctl', ['stop', '-m', mode, '-w', '-D', data]);
        running.delete(data);
        return at;
      },
      promote: async () => {
        await pg('pg_ctl', ['promote', '-w', '-t', '60', '-D', standby.data]);
        // The standby copied synchronous_standby_names: as the new primary, with no standby of its
        // own, every commit would wait for ever. An HA manager (Patroni's non-strict
        // synchronous_mode) drops it until a standby rejoins; so do we.
        if (synchronous) {
          await cluster.psql("ALTER SYSTEM SET synchronous_standby_names = ''", standby);
          await cluster.psql('SELECT pg_reload_conf()', standby);
        }
        return Date.now();
      },
      dispose,
    };
    // Streaming (and, with `synchronous`, acknowledged as the synchronous standby) before anyone writes.
    const want = synchronous ? 'sync' : 'async';
    for (let i = 0; ; i++) {
      const state = await cluster.psql("SELECT state || ' ' || sync_state FROM pg_stat_replication");
      if (state === `streaming ${want}`) break;
      if (i > 300) throw new Error(`the standby is not streaming (${want}) after 30 s: ${JSON.stringify(state)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return cluster;
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** The newest /usr/lib/postgresql/<major>/bin that has initdb and pg_basebackup. */
async function postgresBin() {
  const root = '/usr/lib/postgresql';
  const majors = await readdir(root).catch(() => /** @type {string[]} */ ([]));
  for (const major of majors.sort((a, b) => Number(b) - Number(a))) {
    const bin = join(root, major, 'bin');
    try {
      await access(join(bin, 'initdb'), constants.X_OK);
      await access(join(bin, 'pg_basebackup'), constants.X_OK);
      return bin;
    } catch {
      // not this one
    }
  }
  throw new Error(
    "PostgreSQL server binaries (initdb, pg_basebackup) not found under /usr/lib/postgresql/<major>/bin: install Debian's postgresql package",
  );
}

/** @returns {Promise<[number, number]>} the uid and gid of the `postgres` OS user */
async function postgresIds() {
  const { stdout } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  return [Number(stdout.trim()), Number(gid.trim())];
}
