"""Hostile inputs for the peak-memory table of docs/limits.md.

usage: python3 bench/hostile_inputs.py KIND SIZE OUT -- writes about SIZE bytes of KIND to OUT,
a megabyte at a time (the generator itself stays small). KINDs: json_array, json_string,
json_deep, json_empty_arrays, mp_array, mp_string, mp_deep, mime_line, record (one
`pg copy in` record), cache_script (one `cache run` put).
"""
import sys, struct
kind, size, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
f = open(out, 'wb')
CH = 1 << 20
def rep(unit, n):
    blk = unit * (CH // len(unit))
    while n >= len(blk):
        f.write(blk); n -= len(blk)
    f.write(unit * (n // len(unit)))
if kind == 'json_array':      # [1,1,1,...]
    f.write(b'['); rep(b'1,', size - 3); f.write(b'1]')
elif kind == 'json_string':   # "xxxx..."
    f.write(b'"'); rep(b'x', size - 2); f.write(b'"')
elif kind == 'json_deep':     # [[[[...]]]]
    rep(b'[', size // 2); rep(b']', size // 2)
elif kind == 'json_empty_arrays':   # [[],[],...]
    f.write(b'['); rep(b'[],', size - 4); f.write(b'[]]')
elif kind == 'mp_array':      # array32 of positive fixints
    n = size - 5; f.write(b'\xdd' + struct.pack('>I', n)); rep(b'\x01', n)
elif kind == 'mp_string':     # str32
    n = size - 5; f.write(b'\xdb' + struct.pack('>I', n)); rep(b'x', n)
elif kind == 'mp_deep':       # nested fixarray(1)
    rep(b'\x91', size - 1); f.write(b'\xc0')
elif kind == 'mime_line':     # one media type line with a huge parameter value
    f.write(b'text/plain;a='); rep(b'x', size - 14); f.write(b'\n')
elif kind == 'record':        # one copy-in record with a long string
    f.write(b'{"b":"'); rep(b'x', size - 9); f.write(b'"}\n')
elif kind == 'cache_script':  # put of one long document
    f.write(b'put 1 "'); rep(b'x', size - 10); f.write(b'"\n')
f.close()
