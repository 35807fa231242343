#!/usr/bin/env bash
# libjpeg-turbo for gpuscope-torch's --input jpeg on the GPU machines, which have no Debian -dev
# packages: copies libjpeg62-turbo-dev's headers and its static libjpeg.a into .carry/usr, where
# the device build finds them (cmake/jpeg.cmake) with -DCMAKE_PREFIX_PATH=$PWD/.carry/usr.
#
#   bash bench/torch_jpeg_carry.sh           # here, before the device call; then carry .carry
#   cmake -S workloads/torch -B build/torch-device -G Ninja -DCMAKE_BUILD_TYPE=Release \
#     -DCMAKE_PREFIX_PATH="$PWD/.carry/usr"  # there
#
# Adds to .carry/usr without removing what other prepare steps put there (bench/monitor_device.sh
# prepare recreates it: run this one after it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usr="$root/.carry/usr"
lib=/usr/lib/x86_64-linux-gnu
for f in /usr/include/jpeglib.h /usr/include/jmorecfg.h /usr/include/jerror.h \
  /usr/include/x86_64-linux-gnu/jconfig.h "$lib/libjpeg.a"; do
  [ -f "$f" ] || { echo "torch_jpeg_carry: $f missing (apt-get install libjpeg62-turbo-dev)" >&2; exit 1; }
done
mkdir -p "$usr/include" "$usr/lib"
# jconfig.h sits in the multiarch folder on Debian; next to jpeglib.h it needs no extra -I.
cp /usr/include/jpeglib.h /usr/include/jmorecfg.h /usr/include/jerror.h \
  /usr/include/x86_64-linux-gnu/jconfig.h "$usr/include/"
cp "$lib/libjpeg.a" "$usr/lib/"
du -sh "$usr/include/jpeglib.h" "$usr/lib/libjpeg.a"
