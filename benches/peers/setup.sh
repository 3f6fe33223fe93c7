#!/usr/bin/env bash
# Installs what the compare runner's peers need to build on a fresh Debian machine:
# Box3D (boxddd-sys) needs only a C compiler; Jolt (joltc-sys) needs cmake and libclang;
# PhysX (physx-sys) compiles its SDK with clang++.
# Then: cargo run --release -p joule-benches --features peers --bin compare -- --threads 1,2
set -euo pipefail
need=()
command -v cc >/dev/null || need+=(build-essential)
command -v cmake >/dev/null || need+=(cmake)
ldconfig -p | grep -q libclang || need+=(libclang-dev)
command -v clang++ >/dev/null || need+=(clang)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update
  $SUDO apt-get install -y "${need[@]}"
fi
echo "peers' build tools present"
