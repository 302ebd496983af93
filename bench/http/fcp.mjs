// First contentful paint of the snowflake web page in Debian's headless
// Chromium, read from the Paint Timing API, and the bytes the page pulls in.
//
// Usage: node fcp.mjs URL [LOADS]   (run.sh sets PLAYWRIGHT_CORE to the
// playwright-core entry point it found). Prints one JSON object.
//
// Every load gets a fresh browser context, so nothing is cached between
// loads; one warm-up load (Chromium's own first-start costs) is discarded.
const url = process.argv[2];
const loads = Number(process.argv[3] || 10);
if (!url) {
  console.error('usage: node fcp.mjs URL [LOADS]');
  process.exit(2);
}
const { chromium } = await import(process.env.PLAYWRIGHT_CORE || 'playwright-core');

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});

async function load() {
  const context = await browser.newContext();
  const page = await context.newPage();
  const bodies = [];
  page.on('requestfinished', (request) => {
    bodies.push(
      request.sizes().then(
        (sizes) => ({
          path: new URL(request.url()).pathname,
          type: request.resourceType(),
          body: sizes.responseBodySize,
          wire: sizes.responseBodySize + sizes.responseHeadersSize,
        }),
        () => ({ path: new URL(request.url()).pathname, type: request.resourceType(), body: 0, wire: 0 }),
      ),
    );
  });
  await page.goto(url, { waitUntil: 'load' });
  // The paint entry may land after `load`; a buffered observer sees it either way.
  const timing = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const done = () => {
          const fcp = performance.getEntriesByName('first-contentful-paint')[0];
          const fp = performance.getEntriesByName('first-paint')[0];
          const nav = performance.getEntriesByType('navigation')[0];
          const resources = performance.getEntriesByType('resource');
          resolve({
            fcp: fcp ? fcp.startTime : null,
            fp: fp ? fp.startTime : null,
            domContentLoaded: nav.domContentLoadedEventEnd,
            // When the last stylesheet or script had arrived: the network's share.
            assetsDone: Math.max(
              nav.responseEnd,
              ...resources
                .filter((e) => e.initiatorType === 'link' || e.initiatorType === 'script')
                .map((e) => e.responseEnd),
            ),
            load: nav.loadEventEnd,
          });
        };
        if (performance.getEntriesByName('first-contentful-paint').length) return done();
        new PerformanceObserver(() => done()).observe({ type: 'paint', buffered: true });
        setTimeout(done, 5000);
      }),
  );
  // Let the page's own API calls finish so their sizes are counted.
  await page.waitForLoadState('networkidle').catch(() => {});
  const responses = await Promise.all(bodies);
  await context.close();
  return { ...timing, bodies: responses };
}

await load();
const runs = [];
for (let i = 0; i < loads; i++) runs.push(await load());
await browser.close();

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fcps = runs.map((r) => r.fcp).filter((x) => x !== null);
const last = runs[runs.length - 1];
// The page proper (HTML, CSS, JS) apart from the API calls its script makes.
const isPage = (r) => ['document', 'stylesheet', 'script'].includes(r.type);
const sum = (rs, k) => rs.reduce((n, r) => n + r[k], 0);
console.log(
  JSON.stringify({
    loads: runs.length,
    fcp_ms: fcps.map((x) => Math.round(x * 10) / 10),
    fcp_median_ms: median(fcps),
    fcp_min_ms: Math.min(...fcps),
    fcp_max_ms: Math.max(...fcps),
    dcl_median_ms: median(runs.map((r) => r.domContentLoaded)),
    load_median_ms: median(runs.map((r) => r.load)),
    assets_done_median_ms: median(runs.map((r) => r.assetsDone)),
    page_requests: last.bodies.filter(isPage).length,
    page_body_bytes: sum(last.bodies.filter(isPage), 'body'),
    page_wire_bytes: sum(last.bodies.filter(isPage), 'wire'),
    api_requests: last.bodies.filter((r) => !isPage(r)).length,
    api_body_bytes: sum(last.bodies.filter((r) => !isPage(r)), 'body'),
    resources: last.bodies,
  }),
);
