#!/bin/sh
# A kernel outside this repository runs in a process group of its own, which a
# Ctrl-C at the terminal does not reach: when vla is interrupted (SIGINT, SIGTERM)
# while the kernel runs, vla must stop the kernel's whole group and remove the
# temporary folder that holds its stream, for --external-cmd and --external-serve.
#   usage: external_interrupt.sh VLA_BINARY
set -u
vla=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# $1: signal, $2: how the kernel is given, $3: the kernel, which writes its shell's pid (its process group) to $dir/pid,
# starts a child of its own and waits (a grandchild that must die too).
case_() {
  sig=$1 how=$2 kernel=$3
  rm -f "$dir/pid"
  mkdir -p "$dir/tmp"
  # A script's background job starts with SIGINT ignored; a terminal's foreground job has it at its default.
  TMPDIR="$dir/tmp" env --default-signal=INT,TERM "$vla" fuzz --cases 1 "$how" "$kernel" --dtype fp32 >"$dir/out" 2>&1 &
  pid=$!
  i=0
  while [ ! -s "$dir/pid" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done
  [ -s "$dir/pid" ] || { kill -KILL $pid; fail "$how: the kernel never started"; }
  sleep 0.2
  group=$(cat "$dir/pid")
  [ -n "$(ls -A "$dir/tmp")" ] || fail "$how: no temporary folder while the kernel runs (TMPDIR not used?)"
  kill -"$sig" $pid
  wait $pid
  rc=$?
  [ $rc -ne 0 ] || fail "$how, SIG$sig: vla exited 0"
  i=0
  while kill -0 -- "-$group" 2>/dev/null && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
  if kill -0 -- "-$group" 2>/dev/null; then
    kill -KILL -- "-$group"
    fail "$how, SIG$sig: the kernel's process group $group still runs after vla ended"
  fi
  [ -z "$(ls -A "$dir/tmp")" ] || fail "$how, SIG$sig: left in TMPDIR: $(ls -A "$dir/tmp")"
  echo "ok: $how, SIG$sig: vla exit $rc, the kernel's group gone, no temporary folder left"
}

case_ INT --external-cmd "echo \$\$ > $dir/pid; sleep 60 & wait; : {input} {output}"
case_ TERM --external-cmd "echo \$\$ > $dir/pid; sleep 60 & wait; : {input} {output}"
case_ INT --external-serve "echo \$\$ > $dir/pid; sleep 60 & wait"
case_ TERM --external-serve "echo \$\$ > $dir/pid; sleep 60 & wait"
