#!/usr/bin/env bash
# Runs the README's test command on another Debian release, in a chroot of it, as root:
#   tools/chroot-test.sh trixie [MAKE ARGUMENTS]   (default: test; CI adds CTEST_ARGS=...)
# CI runs it for Debian 13 after the Debian 12 tests (docs/development.md#what-ci-checks). The
# same steps as the Containerfile: a debootstrap root, tools/install-deps.sh inside it, then
# `make test` on this checkout, bind-mounted at /src, in the build folder build-<release>.
# What it makes is kept between runs under $DRIFT_CHROOT_CACHE (default /var/cache/drift): the
# release's base file system (a tarball, so a broken root is rebuilt in seconds), the root with
# its packages installed, and ccache's files; a second run on the same machine compiles little.
set -euo pipefail
release="${1:?usage: tools/chroot-test.sh RELEASE [MAKE ARGUMENTS]}"
shift
[[ $# -gt 0 ]] || set -- test
target="$(printf '%q ' "$@")"
cache="${DRIFT_CHROOT_CACHE:-/var/cache/drift}"
here="$(cd "$(dirname "$0")/.." && pwd)"
mirror="$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)"
mirror="${mirror:-http://deb.debian.org/debian}"
root="$cache/roots/$release"
base="$cache/$release-base.tar"

[[ $(id -u) -eq 0 ]] || { echo "chroot-test: needs root (debootstrap, mount, chroot)" >&2; exit 1; }
need() { command -v "$1" > /dev/null || { echo "chroot-test: installing $2"; apt-get install -y -qq "$2" > /dev/null; }; }
need debootstrap debootstrap
started=$SECONDS
stamp() { echo "chroot-test: $1 ($((SECONDS - started)) s)"; }

if [[ ! -s "$base" ]]; then
  stamp "debootstrap $release from $mirror"
  tmp="$cache/$release-debootstrap"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  debootstrap --variant=minbase --include=ca-certificates "$release" "$tmp" "$mirror" > "$cache/$release-debootstrap.log"
  tar -C "$tmp" -cf "$base.part" .
  mv "$base.part" "$base"
  rm -rf "$tmp"
fi
if [[ ! -x "$root/usr/bin/apt-get" ]]; then
  stamp "a root of $release from $base"
  rm -rf "$root"
  mkdir -p "$root"
  tar -C "$root" -xf "$base"
fi

# Mounts: the kernel's file systems, this checkout at /src and ccache's folder; undone on exit.
mounts=()
mount_in() {  # mount_in SOURCE PATH_IN_ROOT MOUNT_OPTIONS...
  if [[ -f "$1" ]]; then touch "$root$2"; else mkdir -p "$root$2"; fi
  mount "${@:3}" "$1" "$root$2"
  mounts=("$root$2" "${mounts[@]}")
}
cleanup() { for m in "${mounts[@]}"; do umount -l "$m" 2> /dev/null || true; done; }
trap cleanup EXIT
mount_in proc /proc -t proc
mount_in /sys /sys --rbind
mount_in /dev /dev --rbind
mount_in "$here" /src --bind
mkdir -p "$cache/ccache-$release"
mount_in "$cache/ccache-$release" /root/.cache/ccache --bind
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The host's CA bundle, for a host behind a TLS-intercepting proxy (curl fetches the npm package).
mount_in /etc/ssl/certs/ca-certificates.crt /run/host-ca.crt --bind -o ro

# make runs the README's command; a minimal root has no make yet (install-deps.sh adds the rest).
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root bash -c \
  "command -v make > /dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make > /dev/null; }"
stamp "make $target in $release"
# Only what the tests need from the host's environment; CI's own variable says where it runs.
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 CI="${CI:-}" \
  CURL_CA_BUNDLE=/run/host-ca.crt \
  bash -c "cd /src && make $target BUILD_DIR=build-$release"
stamp "make $target in $release passed"
