// What the package's tests share: the repository's shared vectors, the
// package itself as a user imports it, and the `snowflake` command it must
// agree with (SNOWFLAKE_BIN, else the release build scripts/npm-test makes).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SnowflakeError, compose, decode, parseLayout } from '../index.js';

export const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT = path.resolve(PACKAGE, '../..');

const json = (file) => JSON.parse(readFileSync(path.join(ROOT, 'testdata', file), 'utf8'));
export const VECTORS = json('vectors.json');
export const MASK_CASES = json('mask-vectors.json').cases;

/** A vector's layout: its spec, with the epoch and tick the vector gives, if any. */
export function vectorLayout(spec, { epoch_ms, tick_ms }) {
  const options = {};
  if (epoch_ms !== undefined) options.epoch = BigInt(epoch_ms);
  if (tick_ms !== undefined) options.tickMs = BigInt(tick_ms);
  return parseLayout(spec, options);
}

/** What an error vector (`VECTORS.errors`) asks of the package, which must throw: read a layout, decode or compose. */
export function attemptVector(e) {
  if (e.op === 'layout') return vectorLayout(e.spec, e);
  if (e.op === 'decode') return decode(e.id, e.layout);
  return compose({ timestamp: e.timestamp_ms, fields: e.fields }, e.layout);
}

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
