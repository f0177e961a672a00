#!/usr/bin/env node
// Generates src/mediatype/mt_known_table.c from node_modules/mime-db/db.json: the well-known
// media types (essence, extensions, default charset, compressible flag, source) and two
// perfect hashes (essence -> id, extension -> id), both case-insensitive over ASCII.
//
//   node scripts/gen-mime-db.js              writes src/mediatype/mt_known_table.c
//   node scripts/gen-mime-db.js --check      exits 1 if the committed file differs, 77 when
//                                            node_modules/mime-db is absent (test skip)
//   node scripts/gen-mime-db.js --out FILE   writes FILE instead
//
// The perfect hash is hash-and-displace: one pass over the key gives two 32-bit hashes; the
// first picks a bucket, the bucket's displacement d (found here) mixes the second into a slot
// of a power-of-two table. The C side (mt_known.c) computes the same hashes; keep in sync.
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const dbPath = path.join(root, 'node_modules', 'mime-db', 'db.json');
const pkgPath = path.join(root, 'node_modules', 'mime-db', 'package.json');
const defaultOut = path.join(root, 'src', 'mediatype', 'mt_known_table.c');

const args = process.argv.slice(2);
const check = args.includes('--check');
const outIdx = args.indexOf('--out');
const outPath = outIdx >= 0 ? args[outIdx + 1] : defaultOut;

if (!fs.existsSync(dbPath)) {
  console.error(`gen-mime-db: ${dbPath} is missing (run scripts/deps.sh)`);
  process.exit(check ? 77 : 1);
}
const db = JSON.parse(fs.readFileSync(dbPath, 'utf8'));
// Two unregistered spellings of MessagePack that services send and clients ask for, beside
// the IANA-registered application/vnd.msgpack (which mime-db has): known here so that they
// parse to a well-known id and render from the table like any other type. No extensions, no
// source (neither IANA, Apache nor nginx lists them).
for (const t of ['application/msgpack', 'application/x-msgpack']) {
  if (db[t] === undefined) db[t] = {};
}
const version = JSON.parse(fs.readFileSync(pkgPath, 'utf8')).version;

// ---- hashing (mirrored in src/mediatype/mt_known.c) ----
// Word at a time: 8 bytes as a little-endian 64-bit word, ORed with 0x20 in every byte (this
// folds ASCII case, and merges a few punctuation pairs, which is harmless for a hash: the
// key is compared exactly, case-insensitively, afterwards), then mixed. The last partial word
// is zero-padded before the OR is masked to its length. h1 is the low half, h2 the high half.
const M64 = (1n << 64n) - 1n;
const K1 = 0x9e3779b97f4a7c15n, K2 = 0xff51afd7ed558ccdn;
function hash2(bytes) {
  let h = (K1 ^ BigInt(bytes.length)) & M64;
  let i = 0;
  const step = (w) => {
    h = ((h ^ w) * K2) & M64;
    h ^= h >> 32n;
  };
  for (; i + 8 <= bytes.length; i += 8) {
    let w = 0n;
    for (let k = 7; k >= 0; k--) w = (w << 8n) | BigInt(bytes[i + k] | 0x20);
    step(w);
  }
  let w = 0n;
  for (let k = bytes.length - 1; k >= i; k--) w = (w << 8n) | BigInt(bytes[k] | 0x20);
  step(w);
  h = ((h ^ (h >> 29n)) * K1) & M64;
  h ^= h >> 32n;
  return [Number(h & 0xffffffffn), Number(h >> 32n)];
}
function fmix(h) {
  h = (h ^ (h >>> 16)) >>> 0;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h = (h ^ (h >>> 13)) >>> 0;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
function slotOf(h2, d, mask) { return fmix((h2 + Math.imul(d, 0x9e3779b1)) >>> 0) & mask; }
function pow2(n) { let p = 1; while (p < n) p *= 2; return p; }

// keys: array of strings; returns {nbuckets, nslots, disp[], slots[] (index+1, 0 = empty)}
function perfectHash(keys) {
  const nbuckets = pow2(Math.max(1, Math.ceil(keys.length / 4)));
  const nslots = pow2(Math.ceil(keys.length * 1.25));
  const buckets = Array.from({ length: nbuckets }, () => []);
  const hashes = keys.map((k) => hash2(Buffer.from(k, 'latin1')));
  hashes.forEach((h, i) => buckets[h[0] & (nbuckets - 1)].push(i));
  const order = buckets.map((b, i) => i).sort((a, b) => buckets[b].length - buckets[a].length || a - b);
  const disp = new Array(nbuckets).fill(0);
  const slots = new Array(nslots).fill(0);
  for (const bi of order) {
    const members = buckets[bi];
    if (members.length === 0) continue;
    let found = false;
    for (let d = 0; d < 65536 && !found; d++) {
      const taken = new Set();
      let ok = true;
      for (const k of members) {
        const s = slotOf(hashes[k][1], d, nslots - 1);
        if (slots[s] !== 0 || taken.has(s)) { ok = false; break; }
        taken.add(s);
      }
      if (ok) {
        for (const k of members) slots[slotOf(hashes[k][1], d, nslots - 1)] = k + 1;
        disp[bi] = d;
        found = true;
      }
    }
    if (!found) throw new Error('perfect hash: no displacement found');
  }
  return { nbuckets, nslots, disp, slots };
}

// ---- the table ----
const types = Object.keys(db).sort();
for (const t of types) {
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/.test(t)) {
    throw new Error(`not a lowercase token/token essence: ${t}`);
  }
}
const idOf = new Map(types.map((t, i) => [t, i + 1]));
const sources = ['', 'iana', 'apache', 'nginx'];

// Extension -> type, with the preference rule of the npm mime-types package (2.x).
const extType = new Map();
const preference = ['nginx', 'apache', undefined, 'iana'];
for (const type of Object.keys(db)) {
  for (const ext of db[type].extensions || []) {
    const cur = extType.get(ext);
    if (cur !== undefined) {
      const from = preference.indexOf(db[cur].source);
      const to = preference.indexOf(db[type].source);
      if (cur !== 'application/octet-stream' &&
          (from > to || (from === to && cur.substr(0, 12) === 'application/'))) {
        continue;
      }
    }
    extType.set(ext, type);
  }
}
const exts = [...extType.keys()].sort();

function cstr(s) {
  return '"' + s.replace(/[\\"]/g, (m) => '\\' + m) + '"';
}

const lines = [];
const P = (s) => lines.push(s);
P(`/*`);
P(` * Well-known media types, generated by scripts/gen-mime-db.js from mime-db ${version}.`);
P(` * Do not edit: run \`node scripts/gen-mime-db.js\` (a test checks this file is current).`);
P(` * ${types.length} types, ${exts.length} extensions; ids are 1-based indexes into wk__mt_known.`);
P(` */`);
P(`#include "mediatype/mt_internal.h"`);
P(``);
P(`const size_t wk__mt_known_count = ${types.length};`);
P(``);
// extension lists
P(`static const char *const exts[] = {`);
let extOff = 0;
const extStart = [];
for (const t of types) {
  extStart.push(extOff);
  for (const e of db[t].extensions || []) {
    P(`    ${cstr(e)},`);
    extOff++;
  }
}
P(`    NULL,`);
P(`};`);
P(``);
P(`const wk_mt_known wk__mt_known[] = {`);
P(`    {NULL, 0, NULL, -1, 0, 0, NULL, {NULL, NULL}},`);
types.forEach((t, i) => {
  const v = db[t];
  const charset = v.charset ? cstr(v.charset) : 'NULL';
  const comp = v.compressible === true ? 1 : v.compressible === false ? 0 : -1;
  const src = Math.max(0, sources.indexOf(v.source || ''));
  const ne = (v.extensions || []).length;
  const withUtf8 = (v.charset && v.charset.toUpperCase() === 'UTF-8') || t.startsWith('text/');
  const r = withUtf8 ? `{${cstr(t + ';charset=utf-8')}, ${cstr(t + '; charset=utf-8')}}` : '{NULL, NULL}';
  P(`    {${cstr(t)}, ${t.length}, ${charset}, ${comp}, ${src}, ${ne}, ${ne ? `exts + ${extStart[i]}` : 'NULL'},`);
  P(`     ${r}},`);
});
P(`};`);
P(``);
function emitHash(name, keys, valueOf) {
  const h = perfectHash(keys);
  P(`/* ${name}: ${keys.length} keys, ${h.nbuckets} buckets, ${h.nslots} slots. */`);
  P(`const uint16_t wk__mt_${name}_disp[${h.nbuckets}] = {`);
  for (let i = 0; i < h.nbuckets; i += 12) P(`    ${h.disp.slice(i, i + 12).join(', ')},`);
  P(`};`);
  P(`const uint16_t wk__mt_${name}_slot[${h.nslots}] = {`);
  const vals = h.slots.map((s) => (s === 0 ? 0 : valueOf(s - 1)));
  for (let i = 0; i < h.nslots; i += 12) P(`    ${vals.slice(i, i + 12).join(', ')},`);
  P(`};`);
  P(`const uint32_t wk__mt_${name}_nbuckets = ${h.nbuckets}, wk__mt_${name}_nslots = ${h.nslots};`);
  P(``);
}
emitHash('essence', types, (k) => k + 1);
// Extension slots hold an index + 1 into wk__mt_ext_names / wk__mt_ext_type.
emitHash('ext', exts, (k) => k + 1);
P(`const char *const wk__mt_ext_names[] = {`);
for (const e of exts) P(`    ${cstr(e)},`);
P(`};`);
P(`const uint16_t wk__mt_ext_type[] = {`);
for (let i = 0; i < exts.length; i += 12) {
  P(`    ${exts.slice(i, i + 12).map((e) => idOf.get(extType.get(e))).join(', ')},`);
}
P(`};`);
const text = lines.join('\n') + '\n';

if (check) {
  const cur = fs.existsSync(outPath) ? fs.readFileSync(outPath, 'utf8') : '';
  if (cur !== text) {
    console.error(`gen-mime-db: ${outPath} is stale; run node scripts/gen-mime-db.js`);
    process.exit(1);
  }
  console.log(`gen-mime-db: ${outPath} is current (${types.length} types, ${exts.length} extensions)`);
} else {
  fs.writeFileSync(outPath, text);
  console.log(`gen-mime-db: wrote ${outPath} (${types.length} types, ${exts.length} extensions)`);
}
