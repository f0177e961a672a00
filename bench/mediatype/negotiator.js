#!/usr/bin/env node
// The Node peer of the mediatype suite's negotiation case: times npm negotiator (the
// negotiation behind Express's req.accepts) choosing among the same offers for the same mix
// of Accept values as bench_negotiate.c, in its own process, as an Express handler calls it:
// new Negotiator(req).mediaType(offers) per request.
//
//   node negotiator.js NODE_MODULES_DIR QUICK(0|1) NOFFERS OFFER... ACCEPT...
//
// Prints "ns negotiate <ns per op>", the median of 5 runs (3 when quick), then one line per
// ACCEPT, "out <index> <chosen offer index or -1>", which the C side checks against wirekit.
'use strict';
const path = require('path');
const [modules, quickArg, noffersArg, ...rest] = process.argv.slice(2);
const Negotiator = require(path.resolve(modules, 'negotiator'));
const quick = quickArg === '1';
const noffers = Number(noffersArg);
const offers = rest.slice(0, noffers);
const accepts = rest.slice(noffers);
const requests = accepts.map((accept) => ({ headers: { accept } }));

let sink = 0;
function once(n) {
  let k = 0;
  for (let i = 0; i < n; i++) {
    const chosen = new Negotiator(requests[k]).mediaType(offers);
    sink += chosen === undefined ? 0 : chosen.length;
    k = k + 1 === requests.length ? 0 : k + 1;
  }
}
let iters = 1000;
for (;;) { // calibrate to about 0.2 s (20 ms in quick mode); the JIT warms up meanwhile
  const t0 = process.hrtime.bigint();
  once(iters);
  const dt = Number(process.hrtime.bigint() - t0);
  if (dt > (quick ? 2e7 : 2e8) || iters > 1e9) break;
  iters *= 4;
}
const runs = [];
for (let r = 0; r < (quick ? 3 : 5); r++) {
  const t0 = process.hrtime.bigint();
  once(iters);
  runs.push(Number(process.hrtime.bigint() - t0) / iters);
}
runs.sort((a, b) => a - b);
console.log(`ns negotiate ${runs[runs.length >> 1].toFixed(2)}`);
requests.forEach((req, i) => {
  const chosen = new Negotiator(req).mediaType(offers);
  console.log(`out ${i} ${chosen === undefined ? -1 : offers.indexOf(chosen)}`);
});
if (sink === 42) console.log('#');
