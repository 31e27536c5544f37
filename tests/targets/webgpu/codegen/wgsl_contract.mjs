// The JS side of WgslContract (wgsl_contract_test.cpp): reads jobs [{family, shape, constants}],
// prepares each with web/kernels/wgsl_templates.mjs exactly as the kernel tests and the benchmark
// do, and writes [{code, uniforms (hex), launches: [{entry, dispatch}]}].
//   node wgsl_contract.mjs WGSL_TEMPLATES.mjs JOBS.json OUT.json
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [templates, jobsPath, outPath] = process.argv.slice(2);
const { prepare } = await import(pathToFileURL(templates).href);
const jobs = JSON.parse(readFileSync(jobsPath, 'utf8'));
const results = [];
for (const { family, shape, constants } of jobs) {
  const prepared = await prepare(family, shape, constants);
  results.push({
    code: prepared.code,
    uniforms: Buffer.from(prepared.uniforms).toString('hex'),
    launches: prepared.launches.map(({ entry, dispatch }) => ({ entry, dispatch })),
  });
}
writeFileSync(outPath, JSON.stringify(results));
