// Figure 2's server: GET /plain and GET /guarded (@LeaderOnly) in one Nest HTTP app that leads.
// Prints `@@b {"type":"ready","port":…}`; exits when stdin ends.
//
//   node --import ./test/support/swc-register.mjs bench/apps/http-app.ts
import { httpApp } from './overhead-app.js';
import { emit } from './stores.js';

const app = await httpApp(process.env.FOLLOWER === '1');
emit('http', { type: 'ready', port: app.port });
process.stdin.on('end', () => {
  void app.close().finally(() => process.exit(0));
});
process.stdin.resume();
