// Compiled by `nest build` with the rest of src/ and never run: each marked line must be a type
// error. Should the package's declarations go missing (everything becomes `any`), the markers
// are unused and the build fails with TS2578.
import { LeaderElectionModule, LeaderOnly } from 'nestjs-leader-election';
import { PostgresLeaseStore } from 'nestjs-leader-election/postgres';

export function typesCheck() {
  // @ts-expect-error once is 'per-tick' or nothing
  LeaderOnly({ once: 'per-day' });
  // @ts-expect-error the election name is required
  LeaderElectionModule.forRoot({ store: new PostgresLeaseStore({}) });
  // @ts-expect-error table is a string
  return new PostgresLeaseStore({ table: 42 });
}
