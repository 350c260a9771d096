// One node's writer for the concurrent policy-index test: `node --import tsx policyWriterMain.ts <database url> <seed>
// <steps> <prefix>` writes its random changes to PostgreSQL through its own store (its own connection), exits 0.
import { PostgresStore } from '../../src/main/core/store/postgres';
import { PolicyWriter, randomChanges } from './policyModel';

const [url, seed, steps, prefix] = process.argv.slice(2);
const store = new PostgresStore(url!);
try {
  await randomChanges(new PolicyWriter(store), { seed: Number(seed), steps: Number(steps), prefix: prefix! });
} finally {
  await store.close();
}
