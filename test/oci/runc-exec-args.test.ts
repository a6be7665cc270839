import t from 'tap';
import { parseExecArgs } from '../../src/oci/runc-exec-args.ts';
import { EXEC_ARGV_CASES } from './runc-exec-args.cases.ts';

for (const c of EXEC_ARGV_CASES) {
  t.test(`runc exec ${JSON.stringify(c.argv)}`, async (t) => {
    t.same(parseExecArgs(c.argv), { process: c.process, id: c.id });
  });
}
