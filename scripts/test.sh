#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs, then runs pytest.
#   bash scripts/test.sh [pytest args...]
# As root it installs the cross toolchains and emulators with apt; under CI=true a
# missing toolchain fails the tests instead of skipping them.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
              gcc-aarch64-linux-gnu qemu-user cmake)
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

exec python3 -m pytest -n 2 "$@"
