// `npm run bench [-- name ...]`: runs the named benchmarks (all when none are named) and prints figures.
// Figures are ratios against a baseline measured in the same run: these machines are shared and noisy.
import { benchmarks } from './benchmarks';

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in benchmarks));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(benchmarks).join(', ')}`);
  process.exit(2);
}
for (const name of wanted.length > 0 ? wanted : Object.keys(benchmarks)) {
  console.log(`\n== ${name} ==`);
  await benchmarks[name]!();
}
