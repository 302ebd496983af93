// Verdict parity: the page's every-layout table and the API's
// `GET /api/v1/decode/{id}?layout=all` judge the same IDs alike, preset by
// preset, for 2,000 random IDs and every reading case of testdata/vectors.json.
// The page is driven through its Decode input in Chromium; the API is the
// running `snowflake serve` that served the page (scripts/browser-test).
// Both judge against their own clock, a few milliseconds apart, so a reading
// within seconds of "now plus the slack" could differ by the race alone; such
// readings are counted, not compared, and must stay rare.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PRESET_TABLE, VECTORS, random } from './support/data.mjs';
import { BASE, TEST, open, useBrowser } from './support/browser.mjs';

const TABLE = PRESET_TABLE;
const RANDOM_IDS = 2000;
// Fixed, so that a failure can be run again; VERDICT_SEED tries another.
const SEED = BigInt(process.env.VERDICT_SEED || '0x5eed5eed5eed5eed');
const RACE_MS = 5000n;

useBrowser();

const below = (next, n) => next() % n;

// IDs that land everywhere: any 64 bits, any 63 bits, and for each preset
// times around its platform's first day and up to a few years past now,
// where its verdicts change.
function randomIds(count, nowMs) {
  const next = random(SEED);
  const ids = [];
  for (let i = 0; ids.length < count; i += 1) {
    const kind = i % 4;
    if (kind === 0) {
      ids.push(next());
      continue;
    }
    if (kind === 1) {
      ids.push(next() >> 1n);
      continue;
    }
    const p = TABLE.presets[Number(below(next, BigInt(TABLE.presets.length)))];
    const epoch = BigInt(p.epoch_ms);
    const tick = BigInt(p.tick_ms);
    const launched = BigInt(p.platform.launched_ms);
    const year = 31557600000n;
    let from = launched - 2n * year;
    if (from < epoch) from = epoch;
    const ms = kind === 2 ? from + below(next, 4n * year) : launched - 10n * tick + below(next, 20n) * tick;
    const units = (ms - epoch) / tick;
    if (ms < epoch || units >= 1n << BigInt(p.time_bits)) continue;
    const lowBits = p.fields.reduce((n, [, bits]) => n + bits, 0);
    const low = next() & ((1n << BigInt(lowBits)) - 1n);
    ids.push((units << BigInt(lowBits)) | low);
  }
  return ids.slice(0, count);
}

async function fromApi(id) {
  const response = await fetch(`${BASE}/api/v1/decode/${id}?layout=all`, { headers: { accept: 'application/json' } });
  assert.equal(response.status, 200, `the API's answer for ${id}`);
  const body = await response.json();
  assert.equal(body.id, id.toString());
  return {
    nowMs: BigInt(body.now_ms),
    readings: body.readings.map((r) => ({ layout: r.layout, verdict: r.verdict, time: r.decoded ? r.decoded.time : null, ms: r.decoded ? BigInt(r.decoded.timestamp_ms) : null })),
  };
}

// Types each ID into Decode, as a person pastes it, and reads the table.
async function fromPage(page, ids) {
  return page.evaluate((texts) => {
    const input = document.getElementById('decode-input');
    return texts.map((text) => {
      input.value = text;
      input.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertFromPaste' }));
      const section = document.getElementById('everywhere');
      if (section.hidden) return null;
      return [...document.querySelectorAll('#everywhere-rows tr')].map((tr) => ({
        layout: tr.dataset.layout,
        verdict: tr.dataset.verdict,
        time: tr.querySelector('code').textContent.trim(),
      }));
    });
  }, ids.map(String));
}

test('the page and the API give every preset the same verdict, for random IDs and the vector cases', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  const vectorIds = (VECTORS.readings || []).map((c) => BigInt(c.id));
  const ids = [...randomIds(RANDOM_IDS, BigInt(Date.now())), ...vectorIds];
  const names = TABLE.presets.map((p) => p.name);
  const seen = { possible: 0, implausible: 0, impossible: 0, 'before the platform': 0 };
  const launched = Object.fromEntries(TABLE.presets.map((p) => [p.name, BigInt(p.platform.launched_ms)]));
  let raced = 0;
  for (let start = 0; start < ids.length; start += 250) {
    const batch = ids.slice(start, start + 250);
    const shown = await fromPage(page, batch);
    for (const [i, id] of batch.entries()) {
      const api = await fromApi(id);
      const table = shown[i];
      assert.ok(table, `the page shows no table for ${id}`);
      assert.deepEqual(api.readings.map((r) => r.layout), names, `the API's presets for ${id}`);
      assert.deepEqual(table.map((r) => r.layout), names, `the page's presets for ${id}`);
      for (const [j, want] of api.readings.entries()) {
        const got = table[j];
        const edge = api.nowMs + BigInt(TABLE.future_slack_ms);
        if (want.ms !== null && want.ms > edge - RACE_MS && want.ms < edge + RACE_MS) {
          raced += 1;
          continue;
        }
        assert.equal(got.verdict, want.verdict, `${id} under ${want.layout}: the page says ${got.verdict}, the API ${want.verdict}`);
        assert.equal(got.time, want.time ?? '—', `${id} under ${want.layout}: the time`);
        seen[want.verdict] += 1;
        if (want.verdict === 'implausible' && want.ms < launched[want.layout]) seen['before the platform'] += 1;
      }
    }
  }
  t.diagnostic(`seed ${SEED}: ${ids.length} IDs, ${JSON.stringify(seen)} readings compared, ${raced} too close to now to compare`);
  // The IDs reach every verdict, and the race is rare.
  for (const [verdict, n] of Object.entries(seen)) assert.ok(n >= 20, `only ${n} readings ${verdict}`);
  assert.ok(raced <= 3, `${raced} readings too close to now`);
  assertNoErrors();
});
