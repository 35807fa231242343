#!/usr/bin/env bash
# Installs everything gpuscope needs to build and test on a fresh Debian 12 machine that has
# the CUDA 13 toolkit: Debian packages, and PyPI wheels into .deps/ (never into the repo's
# tracked files). Idempotent: a second run only checks.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="${GPUSCOPE_DEPS_DIR:-$root/.deps}"

debian_packages=(
  cmake ninja-build g++ pkg-config
  libfmt-dev nlohmann-json3-dev libcli11-dev libsqlite3-dev
  libmicrohttpd-dev  # monitor --listen's HTTP server (linked statically: cmake/microhttpd.cmake)
  libgtest-dev libgmock-dev
  chromium fonts-dejavu-core  # the report's end-to-end test loads it in headless Chromium
  libncurses-dev   # gpuscope monitor's live view (optional at build time: GPUSCOPE_WITH_NCURSES)
  tmux             # the live view's test drives it in a tmux pane (tests/cli/monitor_tui_test.sh)
  libbenchmark-dev # bench/monitor_sampler_cost.cc (Google Benchmark)
  util-linux       # unshare: the monitor's full-disk test mounts a tiny private tmpfs
  libjpeg62-turbo-dev  # gpuscope-torch --input jpeg (optional at build time; ships libjpeg.a)
  libgloo-dev  # gpuscope-torch data parallel on the CPU: ProcessGroupGloo.hpp needs Gloo's headers
  clang libclang-rt-14-dev  # the fuzz preset: libFuzzer (docs/testing.md)
)
# PyPI pins: NVML's header matching the CUDA 13.0 driver branch on our GPU machines.
nvml_wheel="nvidia-nvml-dev==13.0.87"
# plotly.js, inlined into `gpuscope report` HTML files, as shipped in the plotly wheel (only
# plotly/package_data/plotly.min.js is used; the Python package itself is never imported).
plotly_wheel="plotly==6.5.2"

missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup-deps: installing Debian packages: ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup-deps: the CUDA 13 toolkit is required (nvcc not found; expected under /usr/local/cuda)" >&2
  exit 1
fi

stamp="$deps/python/.installed-${nvml_wheel//[^A-Za-z0-9.]/_}"
if [ ! -f "$stamp" ]; then
  echo "setup-deps: installing $nvml_wheel into $deps/python"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
    --target "$deps/python" "$nvml_wheel"
  touch "$stamp"
fi

stamp="$deps/python/.installed-${plotly_wheel//[^A-Za-z0-9.]/_}"
if [ ! -f "$stamp" ]; then
  echo "setup-deps: installing $plotly_wheel into $deps/python"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
    --root-user-action=ignore --target "$deps/python" "$plotly_wheel"
  touch "$stamp"
fi

# LibTorch for gpuscope-torch: the PyPI torch wheel (CUDA 13.0 build, the version on our GPU
# machines), unpacked without its dependencies; only its headers and torch/lib are used. Its
# CUDA libraries come from the toolkit, except three the toolkit lacks, from their own wheels
# (the versions torch's metadata pins). See workloads/torch/README.md.
torch_wheels=(torch==2.11.0 nvidia-cusparselt-cu13==0.8.0 nvidia-nvshmem-cu13==3.4.5
  nvidia-cufile==1.15.1.6)
stamp="$deps/torch/.installed-torch-2.11.0"
if [ ! -f "$stamp" ]; then
  echo "setup-deps: installing ${torch_wheels[*]} into $deps/torch (about 760 MB once)"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
    --root-user-action=ignore --target "$deps/torch" "${torch_wheels[@]}"
  touch "$stamp"
fi
