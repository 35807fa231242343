#!/usr/bin/env bash
# Where a program crashes under `gpuscope trace`, on the GPU machine: the program runs under gdb
# when the machine has one, else with a small SIGSEGV/SIGBUS/SIGABRT handler preloaded that prints
# the stack (backtrace_symbols_fd) and each frame's function (addr2line on the unstripped binaries).
#
#   bash bench/trace_crash_device.sh GPUSCOPE INJECT_DIR -- PROGRAM ARGS...
#     GPUSCOPE: a built gpuscope; INJECT_DIR: the folder with libgpuscope_inject.so (unstripped is
#     best); PROGRAM: unstripped too, for names. Writes $OUT/crash/ (stderr, the stack, records).
# Reads the GPU only: never changes a power limit, clocks, MIG, persistence or compute mode.
set -uo pipefail
gpuscope="$1" inject_dir="$2"
shift 3
out="${OUT:-$PWD/out}/crash"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 GPUSCOPE_INJECT_LIBRARY="$inject_dir/libgpuscope_inject.so"

cat >"$out/segv.c" <<'C'
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
static void on_fault(int sig) {
  void* frames[64];
  const char* title = sig == SIGSEGV ? "SIGSEGV\n" : sig == SIGBUS ? "SIGBUS\n" : "SIGABRT\n";
  write(2, "CRASH-STACK ", 12);
  write(2, title, strlen(title));
  int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, 2);
  write(2, "CRASH-END\n", 10);
  signal(sig, SIG_DFL);
  raise(sig);
}
__attribute__((constructor)) static void install(void) {
  signal(SIGSEGV, on_fault);
  signal(SIGBUS, on_fault);
  signal(SIGABRT, on_fault);
}
C
gcc -shared -fPIC -O1 -o "$out/libsegv.so" "$out/segv.c" || exit 1

rm -rf "$out/run"
if command -v gdb >/dev/null; then
  echo "gdb: $(command -v gdb)"
  timeout 300 "$gpuscope" trace --skip-steps 30 --steps 10 -o "$out/run" -- gdb -q -batch \
    -ex run -ex "thread apply all bt 12" -ex quit --args "$@" >"$out/stdout" 2>"$out/stderr"
else
  echo "no gdb: a preloaded handler prints the stack"
  timeout 300 "$gpuscope" trace --skip-steps 30 --steps 10 -o "$out/run" -- env \
    LD_PRELOAD="$out/libsegv.so" "$@" >"$out/stdout" 2>"$out/stderr"
fi
echo "exit $?"
grep -v "^step " "$out/stderr" | tail -60
# Frames as "object(+0xOFFSET)" or "object(symbol+0xOFFSET)": names from addr2line.
sed -n '/CRASH-STACK/,/CRASH-END/p' "$out/stderr" | while IFS= read -r frame; do
  obj="${frame%%(*}" off="${frame#*(}"
  off="${off%%)*}"
  if [[ "$off" == +0x* && -f "$obj" ]]; then
    echo "$frame -> $(addr2line -f -C -e "$obj" "${off#+}" 2>/dev/null | head -1)"
  else
    echo "$frame"
  fi
done | tee "$out/stack.txt"
ls "$out/run" 2>/dev/null | head
