#!/usr/bin/env bash
# The live view checked as a person would: `gpuscope monitor` runs in a tmux pane against the fake
# NVML; keys are sent, the screen is captured and read.
#   monitor_tui_test.sh GPUSCOPE_BIN FAKE_NVML_SO SCENARIO_JSON
set -uo pipefail
bin="$1" fake="$2" scenario="$3"
sock="gpuscope-tui-test-$$"
t() { tmux -L "$sock" "$@"; }
fail=0
check() {  # check "what" "pattern" SCREEN
  if grep -qE -- "$2" <<<"$3"; then echo "ok: $1"; else echo "FAIL: $1 (no /$2/)"; fail=1; fi
}
cleanup() { t kill-server 2>/dev/null; }
trap cleanup EXIT

status_file="$(mktemp)"
t -f /dev/null new-session -d -x 120 -y 40 \
  "env TERM=screen GPUSCOPE_NVML_LIBRARY='$fake' GPUSCOPE_FAKE_NVML_SCENARIO='$scenario' '$bin' monitor --interval 100; echo \$? >'$status_file'"
t set-option -g remain-on-exit on
screen() { t capture-pane -p; }
wait_for() {  # wait_for PATTERN: up to 10 s
  for _ in $(seq 100); do grep -qE -- "$1" <<<"$(screen)" && return 0; sleep 0.1; done
  return 1
}

wait_for "GPU 1  NVIDIA A100" || { echo "FAIL: the live view never showed both GPUs"; screen; exit 1; }
# GPU 0 is power-capped from t = 2 s to 2.5 s: catch it while it lasts.
if wait_for "SW POWER CAP"; then
  esc="$(t capture-pane -p -e)"
  if grep -E "SW POWER CAP" <<<"$esc" | grep -qE $'\e\\[[0-9;]*7[;m]'; then
    echo "ok: throttle reason highlighted"
  else
    echo "FAIL: throttle reason not highlighted"; fail=1
  fi
else
  echo "FAIL: no throttle reason shown"; fail=1
fi
s="$(screen)"
echo "--- 120x40, all GPUs"; echo "$s"
check "title" "^gpuscope monitor  2 GPUs  every 100 ms" "$s"
check "GPU 0 panel" "^GPU 0  NVIDIA H100 80GB HBM3  00000000:18:00.0" "$s"
check "SM activity leads" "^ SM activity +\[#" "$s"
check "tensor activity" "Tensor activity +\[#" "$s"
check "duty cycle labelled" "GPU duty cycle .*\(NVML util\)" "$s"
check "no GPM on the A100" "SM activity +n/a +GPM: Hopper\+" "$s"
check "history plot" "^100%\|" "$s"
check "process list" "^ +4242 +0 +40.0 GiB +95%" "$s"
check "footer" "^q quit" "$s"
t send-keys -t 0 Right  # pick the first GPU
sleep 0.5; s="$(screen)"
echo "--- after Right"; echo "$s" | head -12
check "GPU 0 picked" "^GPU 0  NVIDIA H100" "$s"
if grep -q "GPU 1  NVIDIA A100" <<<"$s"; then echo "FAIL: GPU 1 still shown"; fail=1; else echo "ok: only GPU 0"; fi

t send-keys -t 0 1  # by index
sleep 0.5; s="$(screen)"
check "GPU 1 picked by its index" "^GPU 1  NVIDIA A100" "$s"
if grep -q "^GPU 0  NVIDIA H100" <<<"$s"; then echo "FAIL: GPU 0 still shown"; fail=1; else echo "ok: only GPU 1"; fi

t send-keys -t 0 a
t resize-window -x 80 -y 24
sleep 0.8; s="$(screen)"
echo "--- 80x24, all GPUs"; echo "$s"
check "still drawn after the resize" "^GPU 0  NVIDIA H100" "$s"
check "footer at the new bottom" "^q quit" "$(tail -1 <<<"$s")"
longest="$(awk '{ if (length($0) > m) m = length($0) } END { print m }' <<<"$s")"
if [ "$longest" -le 80 ]; then echo "ok: nothing wider than 80 ($longest)"; else echo "FAIL: a line of $longest columns"; fail=1; fi

sleep 1.5  # GPU 1 is lost at t = 3 s
s="$(screen)"
check "lost GPU marked" "LOST: stopped answering" "$s"

t send-keys -t 0 q
quit_at=$SECONDS
# The exit status, as the shell in the pane saw it (tmux's own pane_dead_status can come late).
status=""
for _ in $(seq 300); do
  status="$(cat "$status_file")"
  [ -n "$status" ] && break
  sleep 0.1
done
rm -f "$status_file"
echo "exited $((SECONDS - quit_at)) s after q"
sleep 0.3  # the pane's last output
s="$(t capture-pane -p -S -200)"  # with what scrolled off
echo "--- after q"; echo "$s" | grep -v '^$' | tail -12
if [ "$status" = 5 ]; then echo "ok: exit code 5 (a GPU was lost)"; else echo "FAIL: exit code '$status', expected 5"; fail=1; fi
check "summary after the view" "^gpuscope monitor: " "$s"
check "lost warning printed after the view" "warning: GPU 1 stopped answering" "$s"
[ "$fail" = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit "$fail"
