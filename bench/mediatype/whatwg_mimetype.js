#!/usr/bin/env node
// The Node peer of the mediatype benchmark suite: times whatwg-mimetype (the WHATWG reference
// implementation used by jsdom) on the same cases as bench_mediatype.c, in its own process.
//
//   node whatwg_mimetype.js NODE_MODULES_DIR QUICK(0|1) SEED RENDER VALUE...
//
// Prints one line per case, "ns <case> <ns per op>", the median of 5 runs, then one line per VALUE,
// "out <index> <hex of the serialization>" (or "out <index> null"), which the C side checks
// against wirekit's output.
'use strict';
const path = require('path');
const [modules, quickArg, seed, render, ...mix] = process.argv.slice(2);
const { MIMEType } = require(path.join(modules, 'whatwg-mimetype'));
const quick = quickArg === '1';

function time(name, fn) {
  let iters = 1000;
  for (;;) { // calibrate to about 0.2 s (20 ms in quick mode)
    const t0 = process.hrtime.bigint();
    fn(iters);
    const dt = Number(process.hrtime.bigint() - t0);
    if (dt > (quick ? 2e7 : 2e8) || iters > 1e9) break;
    iters *= 4;
  }
  const runs = [];
  for (let r = 0; r < (quick ? 3 : 5); r++) {
    const t0 = process.hrtime.bigint();
    fn(iters);
    runs.push(Number(process.hrtime.bigint() - t0) / iters);
  }
  runs.sort((a, b) => a - b);
  console.log(`ns ${name} ${runs[runs.length >> 1].toFixed(2)}`);
}

let sink = 0;
time('parse', (n) => {
  for (let i = 0; i < n; i++) sink += MIMEType.parse(seed).essence.length;
});
const parsed = MIMEType.parse(render);
time('render', (n) => {
  for (let i = 0; i < n; i++) sink += parsed.toString().length;
});
time('parse-mix', (n) => {
  for (let i = 0; i < n; i++) {
    const m = MIMEType.parse(mix[i % mix.length]);
    sink += m === null ? 0 : m.essence.length;
  }
});
mix.forEach((v, i) => {
  const m = MIMEType.parse(v);
  console.log(`out ${i} ${m === null ? 'null' : Buffer.from(m.toString(), 'latin1').toString('hex')}`);
});
if (sink === 42) console.log('#');
