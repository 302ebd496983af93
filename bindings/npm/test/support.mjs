// What the package's tests share: the repository's shared vectors, the
// package itself as a user imports it, and the `snowflake` command it must
// agree with (SNOWFLAKE_BIN, else the release build scripts/npm-test makes).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SnowflakeError } from '../index.js';

export const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT = path.resolve(PACKAGE, '../..');

const json = (file) => JSON.parse(readFileSync(path.join(ROOT, 'testdata', file), 'utf8'));
export const VECTORS = json('vectors.json');
export const MASK_CASES = json('mask-vectors.json').cases;

/** The command, built by scripts/npm-test; its absence fails the tests that need it. */
export function cli() {
  const bin = process.env.SNOWFLAKE_BIN || path.join(ROOT, 'target/release/snowflake');
  if (!existsSync(bin)) throw new Error(`no snowflake command at ${bin}: run scripts/npm-test, or set SNOWFLAKE_BIN`);
  return (args, input) => execFileSync(bin, args, { input, encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** The error `fn` throws, at once, which must be the package's. */
export function thrown(fn) {
  try {
    fn();
  } catch (error) {
    if (error instanceof SnowflakeError) return error;
    throw error;
  }
  throw new Error(`${fn} threw nothing`);
}

// xorshift64*: random 64-bit IDs, the same on every run for a seed.
export function random(seed) {
  let x = BigInt.asUintN(64, seed) || 1n;
  return () => {
    x ^= x >> 12n;
    x = BigInt.asUintN(64, x ^ (x << 25n));
    x ^= x >> 27n;
    return BigInt.asUintN(64, x * 0x2545f4914f6cdd1dn);
  };
}
