/** The command-line options and the statistic the plan benchmarks share. */

/** The value of `--name=value` on the command line, if given. */
export function arg(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

/** Whether `--name` is on the command line. */
export const flag = (name: string): boolean => process.argv.includes(`--${name}`);

/** `--name=1,2,3` as numbers, or `fallback`. */
export const numbers = (name: string, fallback: number[]): number[] => arg(name)?.split(",").map(Number) ?? fallback;

/** The median; of an even count, the mean of the two middle values. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
