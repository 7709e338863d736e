#!/usr/bin/env bash
# The system packages the build and the tests need: a C compiler, Python's venv, memcached and
# PostgreSQL (the cache tier's tests run real servers: tests/test_cachetier.py,
# crates/cachetier/tests), nftables and iproute2 (nft-bench replays packets through network
# namespaces: tests/test_nft_bench.py), clang, llvm and libbpf-dev (the XDP datapath's BPF side is
# compiled by crates/xdp/build.rs and loaded by tests/test_xdp.py; bpftool is for debugging).
#
# Installs the missing ones with apt-get when it runs as root; otherwise prints the one command
# that would, and exits 0 (the tests that need them are then skipped, and say so). Used by
# `make test` and by .ci/run. `--print` only prints the command.
set -euo pipefail

need=()
command -v cc >/dev/null || need+=(build-essential)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
command -v memcached >/dev/null || need+=(memcached)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
PATH="$PATH:/usr/sbin:/sbin" command -v nft >/dev/null || need+=(nftables)
PATH="$PATH:/usr/sbin:/sbin" command -v ip >/dev/null || need+=(iproute2)
command -v clang >/dev/null || need+=(clang llvm)
[ -f /usr/include/bpf/bpf_helpers.h ] || need+=(libbpf-dev libelf-dev)
PATH="$PATH:/usr/sbin:/sbin" command -v bpftool >/dev/null || need+=(bpftool)

((${#need[@]})) || exit 0
if [[ "${1:-}" != "--print" && $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  echo "installing system packages: ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}"
  exit 0
fi
if command -v apt-get >/dev/null; then
  command="sudo apt-get install -y ${need[*]}"
else
  command="install with your package manager: ${need[*]}"
fi
echo "missing system packages (the tests that need them are skipped): ${need[*]}" >&2
echo "  $command" >&2
