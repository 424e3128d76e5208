// Preloaded into a measured process (`node --import ./bench/lib/max-rss.mjs ...`): prints its
// peak resident set size on stderr as it exits, for bench/transfer.ts.
process.on('exit', () => {
  process.stderr.write(`\nMAX_RSS_KB ${process.resourceUsage().maxRSS}\n`);
});
