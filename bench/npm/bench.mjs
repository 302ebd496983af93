// snowflake-toolkit against the npm packages most used for Snowflake IDs, in
// one Node process: decode and compose, operations a second, on the same
// 10,000 Discord IDs (Discord's epoch, which @sapphire/snowflake's
// DiscordSnowflake uses) and the same times. Each contender runs for a
// while in every round, the rounds interleave the contenders so that a
// slow stretch of the machine hits all of them, and each is given as its
// median rate and as its rate over @sapphire/snowflake's in the same round
// (the median of those ratios, and their range), which a busy machine
// disturbs less than the rates themselves. Run from bench/npm after `npm ci`:
//
//   node bench.mjs [rounds] [ms-per-run]
//
// Every contender's result is read (its time and fields), so that no work
// can be skipped. What each call does:
// - snowflake-toolkit decode: the core's checked decode (an ID outside the
//   layout is refused), its time and fields; its text forms, segments and
//   RFC 3339 time are computed when first read, which the "decode + every
//   part" row does.
// - @sapphire/snowflake deconstruct: shifts and masks in BigInt, no checks.
// - nodejs-snowflake: its static timestampFromID and instanceIDFromID.
// - compose: the core's checked compose of time, worker, process and
//   increment; @sapphire's generate with the same; nodejs-snowflake's
//   idFromTimestamp (its only way to make an ID from parts: the time, with
//   the instance it was made with).
import { readFileSync } from 'node:fs';
import { Snowflake } from '@sapphire/snowflake';
import nodejsSnowflake from 'nodejs-snowflake';
import * as toolkit from '../../bindings/npm/index.js';

const ROUNDS = Number(process.argv[2] || 9);
const RUN_MS = Number(process.argv[3] || 250);
const COUNT = 10000;
const DISCORD_EPOCH = 1420070400000;

const discord = toolkit.parseLayout('discord');
const sapphire = new Snowflake(BigInt(DISCORD_EPOCH));
const nodejs = new nodejsSnowflake.Snowflake({ custom_epoch: DISCORD_EPOCH, instance_id: 1 });

// The same parts for everyone: times from 2016 on, workers, processes, increments.
let seed = 0x2545f491n;
function next(n) {
  seed = (seed * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
  return Number((seed >> 33n) % BigInt(n));
}
const parts = Array.from({ length: COUNT }, () => ({
  timestamp: 1462015105796 + next(300_000_000_000),
  worker: next(32),
  process: next(32),
  increment: next(4096),
}));
const ids = parts.map((p) => toolkit.compose({ timestamp: p.timestamp, fields: { worker: p.worker, process: p.process, increment: p.increment } }, discord));
// Each package's input made beforehand, in the form it takes.
const ourParts = parts.map((p) => ({ timestamp: p.timestamp, fields: { worker: p.worker, process: p.process, increment: p.increment } }));
const bigParts = parts.map((p) => ({ timestamp: p.timestamp, workerId: BigInt(p.worker), processId: BigInt(p.process), increment: BigInt(p.increment) }));

// Every contender decodes the same IDs to the same times first.
for (let i = 0; i < COUNT; i += 1) {
  const mine = toolkit.decode(ids[i], discord);
  const theirs = sapphire.deconstruct(ids[i]);
  if (BigInt(mine.timestamp_ms) !== theirs.timestamp || Number(theirs.workerId) !== mine.fields.worker || Number(theirs.increment) !== mine.fields.increment) {
    throw new Error(`@sapphire/snowflake reads ${ids[i]} otherwise`);
  }
  if (nodejsSnowflake.Snowflake.timestampFromID(ids[i], DISCORD_EPOCH) !== mine.timestamp_ms) throw new Error(`nodejs-snowflake reads ${ids[i]} otherwise`);
  if (sapphire.generate(bigParts[i]) !== ids[i]) throw new Error(`@sapphire/snowflake composes ${ids[i]} otherwise`);
}

let sink = 0;
const contenders = {
  decode: {
    'snowflake-toolkit decode': (i) => {
      const d = toolkit.decode(ids[i], discord);
      sink += d.timestamp_ms + d.fields.worker + d.fields.process + d.fields.increment;
    },
    'snowflake-toolkit decode + every part': (i) => {
      sink += JSON.stringify(toolkit.decode(ids[i], discord)).length;
    },
    '@sapphire/snowflake deconstruct': (i) => {
      const d = sapphire.deconstruct(ids[i]);
      sink += Number(d.timestamp + d.workerId + d.processId + d.increment);
    },
    'nodejs-snowflake timestampFromID + instanceIDFromID': (i) => {
      sink += nodejsSnowflake.Snowflake.timestampFromID(ids[i], DISCORD_EPOCH) + nodejsSnowflake.Snowflake.instanceIDFromID(ids[i]);
    },
  },
  compose: {
    'snowflake-toolkit compose': (i) => {
      sink += Number(toolkit.compose(ourParts[i], discord) & 1n);
    },
    '@sapphire/snowflake generate': (i) => {
      sink += Number(sapphire.generate(bigParts[i]) & 1n);
    },
    'nodejs-snowflake idFromTimestamp (time only)': (i) => {
      sink += Number(nodejs.idFromTimestamp(parts[i].timestamp) & 1n);
    },
  },
};

function runFor(fn) {
  let done = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < RUN_MS) {
    for (let i = 0; i < COUNT; i += 1) fn(i);
    done += COUNT;
    elapsed = performance.now() - start;
  }
  return (done / elapsed) * 1000;
}

const results = {};
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [op, group] of Object.entries(contenders)) {
    // Every other round the other way round, so that no contender always
    // runs right after the same one.
    const names = Object.keys(group);
    if (round % 2 === 1) names.reverse();
    for (const name of names) (results[`${op}\t${name}`] ??= [])[round] = runFor(group[name]);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const version = (name) => JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;
console.log(`node ${process.version}; snowflake-toolkit (this checkout), @sapphire/snowflake ${version('@sapphire/snowflake')}, nodejs-snowflake ${version('nodejs-snowflake')}; ${ROUNDS} rounds of ${RUN_MS} ms`);
console.log('| operation | package | ops/s, median | vs @sapphire/snowflake in the same round: median (least–most) |');
console.log('| --- | --- | ---: | ---: |');
for (const op of Object.keys(contenders)) {
  const base = results[`${op}\t${op === 'decode' ? '@sapphire/snowflake deconstruct' : '@sapphire/snowflake generate'}`];
  for (const name of Object.keys(contenders[op])) {
    const runs = results[`${op}\t${name}`];
    const ratios = runs.map((ops, round) => ops / base[round]);
    const spread = `${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`;
    console.log(`| ${op} | ${name} | ${Math.round(median(runs)).toLocaleString('en')} | ${spread} |`);
  }
}
if (sink === 42) console.log('');
