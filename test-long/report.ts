// Prints the figures a long test measured, one JSON line each, for the README's Reliability section.
export function report(name: string, figures: Record<string, unknown>): void {
  process.stdout.write(`    FIGURES ${name} ${JSON.stringify(figures)}\n`);
}
