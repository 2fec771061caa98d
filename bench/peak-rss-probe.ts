/**
 * Loaded with `node --import` into a process the benchmarks spawn (bench/index.ts): prints the
 * process's peak resident set size on stderr as it exits, so a spawned `faultline index` is
 * measured as users run it, with nothing else in the process.
 */
process.on('exit', () => {
  process.stderr.write(`\nfaultline-peak-rss-kb=${process.resourceUsage().maxRSS}\n`);
});
