// The Python fixtures, each run through the whole product with 30% of its model calls failing
// (test/support/fixtureSuite.ts).
import { fixtureSuite } from '../support/fixtureSuite.js';

await fixtureSuite('python');
