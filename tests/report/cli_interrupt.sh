#!/bin/sh
# `vla report` from the command line: SIGINT in the middle of a run leaves the
# previous report untouched and no staging folder; --out naming a folder that is
# not a report is refused with exit code 2 and left alone.
#   usage: cli_interrupt.sh VLA_BINARY
set -u
vla=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A first, complete report.
"$vla" report --tiny --sections state-norm --out "$dir/out" --cache-dir "$dir/cache" --no-progress >/dev/null 2>&1 ||
  fail "first run"
before=$(cat "$dir/out/report.json")

# A second run, interrupted as soon as its staging folder exists.
"$vla" report --tiny --fresh --sections drift,state-norm,jacobian --out "$dir/out" --cache-dir "$dir/cache" \
  --no-progress >/dev/null 2>"$dir/err" &
pid=$!
i=0
while [ -z "$(ls -A "$dir" | grep partial)" ] && [ $i -lt 200 ]; do sleep 0.02; i=$((i + 1)); done
kill -INT $pid
wait $pid
rc=$?
irc=$rc
ls -a "$dir" | grep -q partial && fail "a staging folder was left behind"
if [ $rc -eq 130 ]; then
  [ "$(cat "$dir/out/report.json")" = "$before" ] || fail "the interrupted run changed the previous report"
  grep -q "interrupted" "$dir/err" || fail "no message on interrupt"
elif [ $rc -eq 0 ]; then
  # The signal came after the last check: the run finished; the report must be whole.
  grep -q '"generator": "vla report"' "$dir/out/report.json" || fail "report.json not whole"
  [ "$(tail -c 2 "$dir/out/report.json" | head -c 1)" = "}" ] || fail "report.json not whole"
else
  fail "exit code $rc after SIGINT"
fi

# Not a report folder: refused, exit 2, untouched.
mkdir "$dir/mine" && echo precious >"$dir/mine/notes.txt"
"$vla" report --tiny --sections state-norm --out "$dir/mine" --no-cache --no-progress >/dev/null 2>"$dir/err2"
rc=$?
[ $rc -eq 2 ] || fail "exit code $rc for a non-report --out (expected 2)"
[ "$(cat "$dir/mine/notes.txt")" = precious ] || fail "the user's folder was touched"
[ "$(ls -A "$dir/mine")" = notes.txt ] || fail "files were added to the user's folder"
# Unknown section: exit 2.
"$vla" report --sections nonsense --out "$dir/x" >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown section is not exit 2"
[ ! -e "$dir/x" ] || fail "output created for a bad option"
echo "PASS (interrupted run: exit $irc)"
