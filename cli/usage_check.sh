#!/bin/sh
# The command's surface as a user meets it (no server needed): --help of the command and of
# every subcommand it lists exits 0 with its usage on standard output; no command, an unknown
# command or an unknown option exits 2 with a hint on standard error; every option that takes
# a value takes it as `--opt VALUE` and as `--opt=VALUE` (the same error for the same bad
# value both ways proves the value was read). usage: usage_check.sh WIREKIT
set -u
W=$1
fails=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# expect RC PATTERN ARGS...: runs wirekit ARGS (stdin empty), checks the exit status and that
# stdout+stderr match the grep pattern
expect() {
    want=$1 pat=$2
    shift 2
    "$W" "$@" </dev/null >"$out" 2>"$err"
    rc=$?
    if [ "$rc" != "$want" ] || { [ -n "$pat" ] && ! cat "$out" "$err" | grep -q -- "$pat"; }; then
        echo "FAIL: wirekit $* exited $rc (want $want), output not matching '$pat':"
        cat "$out" "$err" | head -5
        fails=$((fails + 1))
    fi
}

expect 0 '^usage: wirekit' --help
expect 0 '^usage: wirekit' -h
expect 0 '^  --version' --help
expect 0 '^wirekit [0-9]' --version
expect 2 'usage: wirekit' # no command
expect 2 "Try 'wirekit --help'" no-such-command
commands=$("$W" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 {print $1}')
[ -n "$commands" ] || { echo "FAIL: no commands listed by wirekit --help"; exit 1; }
for c in $commands; do
    expect 0 "^usage: wirekit $c" "$c" --help
    expect 0 "^usage: wirekit $c" "$c" -h
    "$W" "$c" --help | grep -q '^Exit status: 0 ' ||
        { echo "FAIL: wirekit $c --help does not state its exit status"; fails=$((fails + 1)); }
done
expect 0 '^usage: wirekit pg' pg copy --help
expect 0 '^usage: wirekit pg' pg query --help
expect 0 '^usage: wirekit pg changes' pg changes --help
expect 2 "slot and --publication are required" pg changes --slot s
expect 2 "needs ENTITY=TABLE:COLUMN" pg changes --slot s --publication p --invalidate bad --redis redis://127.0.0.1:1
expect 2 "invalidate needs the cache's Redis" pg changes --slot s --publication p --invalidate e=t:c
for c in cache convert inspect mime pg; do
    expect 2 "Try 'wirekit $c --help'" "$c" --no-such-option x
done

# both spellings of an option's value, per subcommand: opt NAME VALUE prints the option with
# the current separator (unquoted use splits it into two arguments with a space)
opt() {
    printf '%s%s%s' "$1" "$sep" "$2"
}
for sep in ' ' '='; do
    # shellcheck disable=SC2046
    {
        expect 2 "unknown format 'bogus'" pg query $(opt --format bogus) 'select 1'
        expect 2 "unknown copy format 'bogus'" pg copy out $(opt --format bogus) 'select 1'
        expect 2 "unknown format 'bogus'" pg changes $(opt --format bogus) --slot s --publication p
        expect 2 "timeout needs seconds" pg query $(opt --timeout -1) 'select 1'
        expect 2 "idle-timeout needs seconds" pg query $(opt --idle-timeout -1) 'select 1'
        expect 2 "unknown format 'bogus'" cache $(opt --format bogus) run
        expect 0 '' cache $(opt --ns other) run
        expect 2 "unknown format 'bogus'" convert --from=json $(opt --to bogus)
        expect 2 "max-depth wants" inspect $(opt --max-depth 0)
        expect 0 "^0 top-level values" inspect $(opt --max-value 1M)
        expect 2 "max-value wants a size, not '-1'" inspect $(opt --max-value -1)
        expect 2 "max-value wants a size, not '-1'" convert --from=json --to=json $(opt --max-value -1)
        if [ -x "$(dirname "$W")/wirekit-bench" ]; then
            expect 2 "unknown suite 'bogus'" bench $(opt --suite bogus)
        fi
    }
done
expect 2 "option '--dsn' needs a value" pg query --dsn
expect 2 "option '--ns' needs a value" cache --ns
expect 2 "option '--json' takes no value" mime --json=1 text/plain
# options anywhere before '--', in every subcommand (GNU style)
expect 2 "unknown format 'bogus'" pg query 'select 1' --format bogus
expect 2 "unknown copy format 'bogus'" pg copy out 'select 1' --format bogus
expect 2 "unknown format 'bogus'" cache run --format bogus
expect 2 "max-depth wants" inspect - --max-depth 0
expect 2 "unknown option '-c'" pg query -c 'select 1'
expect 2 "unknown option '-1'" pg query 'select $1' -1
expect 2 "missing QUERY" pg copy out
expect 2 "missing TABLE" pg copy in

if [ "$fails" -ne 0 ]; then
    echo "usage_check: $fails failed"
    exit 1
fi
echo "usage_check: passed"
