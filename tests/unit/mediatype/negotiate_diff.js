#!/usr/bin/env node
// Differential test of wirekit's content negotiation against npm negotiator (the negotiation
// behind Express's req.accepts): generates Accept values and offer lists from a fixed seed,
// asks negotiator which offer it prefers and which offers it accepts at all, asks wirekit
// the same through negotiate-driver (one process, every case on its standard input), and
// fails on the first cases where they differ.
//
//   node negotiate_diff.js DRIVER NODE_MODULES_DIR [CASES [SEED]]
//
// Exits 0 when every case agrees, 1 otherwise, 77 (skip) when negotiator is not installed.
// The Accept values are valid RFC 9110 ones (where wirekit refuses a value negotiator reads
// anyway, the two cannot be compared): real browser and API-client values, and generated
// ones mixing wildcards, parameters (quoted, with commas and semicolons inside quotes, any
// case), weights from 0 to 1 with 0 to 3 decimals, extensions after the weight, empty list
// elements and optional whitespace.
'use strict';
const path = require('path');
const fs = require('fs');
const { spawnSync } = require('child_process');

const [driver, modules, casesArg, seedArg] = process.argv.slice(2);
const negotiatorDir = path.resolve(modules, 'negotiator');
if (!fs.existsSync(path.join(negotiatorDir, 'package.json'))) {
  console.log(`negotiate_diff: ${negotiatorDir} missing (run scripts/deps.sh): skipped`);
  process.exit(77);
}
const Negotiator = require(negotiatorDir);
const ncases = Number(casesArg || 5000);
let seed = Number(seedArg || 20260101) >>> 0;

// mulberry32: small, seeded, the same sequence on every machine
function rand() {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (a) => a[Math.floor(rand() * a.length)];
const chance = (p) => rand() < p;
const caseMix = (s) => (chance(0.15) ? s.toUpperCase() : chance(0.1) ? s[0].toUpperCase() + s.slice(1) : s);

const real = [
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
  'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
  'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8',
  'application/json, text/plain, */*',
  'application/json',
  '*/*',
  'application/vnd.msgpack, application/json;q=0.5',
  'application/x-msgpack',
  'application/msgpack;q=1.0, application/json;q=0.1',
  'application/json;q=0.9,*/*;q=0.1',
  'application/vnd.github+json',
  'application/json, application/problem+json',
  'text/*;q=0.3, text/plain;q=0.7, text/plain;format=flowed, text/plain;format=fixed;q=0.4, */*;q=0.5',
  'audio/*; q=0.2, audio/basic',
  'text/plain; q=0.5, text/html, text/x-dvi; q=0.8, text/x-c',
  'application/json;charset=utf-8',
  '',
];

const types = ['text', 'application', 'image', 'audio'];
const subtypes = {
  text: ['html', 'plain', 'css', 'csv', 'x-c'],
  application: ['json', 'xml', 'vnd.msgpack', 'msgpack', 'x-msgpack', 'xhtml+xml', 'problem+json'],
  image: ['webp', 'png', 'avif'],
  audio: ['basic', 'ogg'],
};
const params = [
  ['charset', ['utf-8', 'UTF-8', 'iso-8859-1', '*', '""', '"utf-8"']],
  ['level', ['1', '2', '"1"']],
  ['format', ['flowed', 'fixed']],
  ['v', ['b3', '"a,b"', '"a;b"', '"x, y;z"']],
];
const qvalues = ['1', '0.9', '0.8', '0.5', '0', '0.001', '1.000', '0.', '1.', '0.55', '0.333', '0.000'];

function genRange() {
  let r;
  const w = rand();
  if (w < 0.12) {
    r = '*/*';
  } else {
    const t = pick(types);
    r = caseMix(t) + '/' + (w < 0.3 ? '*' : caseMix(pick(subtypes[t])));
  }
  const used = new Set();
  const np = chance(0.3) ? 1 + Math.floor(rand() * 2) : 0;
  for (let i = 0; i < np; i++) {
    const [name, values] = pick(params);
    if (used.has(name)) continue;
    used.add(name);
    r += pick([';', '; ', ' ;', ' ; ']) + caseMix(name) + '=' + pick(values);
  }
  if (chance(0.6)) {
    r += pick([';', '; ']) + (chance(0.2) ? 'Q' : 'q') + '=' + pick(qvalues);
    if (chance(0.1)) r += ';ext=' + pick(['1', '"x,y"']);
  }
  return r;
}

// A range naming an offer (as written, or its type with "*"), so that most cases have
// something acceptable and the weights and specificities decide.
function rangeFor(offer) {
  let r = chance(0.7) ? offer : offer.split('/')[0] + '/*';
  if (chance(0.5)) r += ';q=' + pick(qvalues);
  return caseMix(r);
}

function genAccept(offers) {
  if (chance(0.1)) return pick(real);
  const n = 1 + Math.floor(rand() * 6);
  const parts = [];
  for (let i = 0; i < n; i++) {
    parts.push(chance(0.35) ? rangeFor(pick(offers)) : genRange());
    if (chance(0.05)) parts.push('');
  }
  return (chance(0.1) ? ' ' : '') + parts.join(pick([',', ', ', ' , ', ',  '])) + (chance(0.1) ? ' ' : '');
}

const offerPool = [
  'application/json', 'application/vnd.msgpack', 'application/msgpack', 'application/x-msgpack',
  'text/html', 'text/plain', 'text/plain;format=flowed', 'text/plain;format=fixed',
  'text/plain;charset=utf-8', 'text/html;level=1', 'text/html;level=3', 'image/webp',
  'image/png', 'application/xml', 'application/problem+json', 'Application/JSON',
  'text/x-c', 'audio/basic', 'audio/ogg', 'text/csv;charset=UTF-8', 'application/xhtml+xml',
  'image/jpeg', 'text/plain;v=b3', 'text/html;charset=iso-8859-1;level=2',
];

function genOffers() {
  const n = 1 + Math.floor(rand() * 5);
  const out = [];
  while (out.length < n) {
    const o = pick(offerPool);
    if (!out.some((x) => x.toLowerCase() === o.toLowerCase())) out.push(o);
  }
  return out;
}

const cases = [];
for (const a of real) cases.push([a, ['application/json', 'application/vnd.msgpack', 'text/html']]);
while (cases.length < ncases) {
  const offers = genOffers();
  cases.push([genAccept(offers), offers]);
}

const input = cases.map(([a, o]) => [a, ...o].join('\t')).join('\n') + '\n';
const run = spawnSync(driver, [], { input, maxBuffer: 64 << 20 });
if (run.status !== 0) {
  console.error(`negotiate_diff: ${driver} exited ${run.status}: ${run.stderr}`);
  process.exit(1);
}
const lines = run.stdout.toString().split('\n');
let fails = 0, chosenNone = 0;
cases.forEach(([accept, offers], i) => {
  const neg = new Negotiator({ headers: { accept } });
  const best = neg.mediaType(offers);
  const acceptable = new Set(neg.mediaTypes(offers));
  const want = `${best === undefined ? -1 : offers.indexOf(best)} ` +
    offers.map((o) => (acceptable.has(o) ? '1' : '0')).join('');
  if (best === undefined) chosenNone++;
  if (lines[i] !== want) {
    if (fails++ < 10) {
      console.log(`FAIL case ${i}: Accept '${accept}', offers ${JSON.stringify(offers)}:`);
      console.log(`  negotiator: ${want}\n  wirekit:    ${lines[i]}`);
    }
  }
});
console.log(`negotiate_diff: ${cases.length} cases (${chosenNone} with no acceptable offer), ` +
  `${cases.length - fails} agree, ${fails} differ`);
console.log(`${cases.length - fails} passed, ${fails} failed`);
process.exit(fails === 0 ? 0 : 1);
