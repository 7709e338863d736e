#!/usr/bin/env bash
# Packs this machine's memcached and PostgreSQL (the Debian packages that
# scripts/install-system-packages.sh installs) into one folder that starts them on a Linux
# machine that has neither and cannot install them (a lent device machine: no network, no
# packages), so that `reproduce fig11` can measure there. Every shared library the servers load
# comes along except glibc's own; wrappers in DIR/bin set the library path for the servers alone
# (the machine's Python and tools keep theirs). PostgreSQL finds its share/ and lib/ folders
# relative to its binary, so the Debian layout is kept under DIR/usr.
#
#   scripts/carry-cache-servers.sh DIR            # the folder
#   scripts/carry-cache-servers.sh DIR.tar.xz     # the folder, compressed (to carry: 64 MiB at most)
#
# There: unpack (or copy) it where the unprivileged user the servers run as (nobody, when root
# starts them) can read it, e.g. /tmp, then PATH=DIR/bin:$PATH superlinear reproduce fig11 ...
set -euo pipefail

target=${1:?usage: scripts/carry-cache-servers.sh DIR | DIR.tar.xz}
memcached=$(command -v memcached || true)
initdb=$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -z $memcached || -z $initdb ]]; then
    echo "carry-cache-servers: needs memcached and PostgreSQL installed here (scripts/install-system-packages.sh)" >&2
    exit 1
fi
pgbin=$(dirname "$initdb")
pgver=$(basename "$(dirname "$pgbin")")

case $target in
    *.tar.xz)
        work=$(mktemp -d)
        trap 'rm -rf "$work"' EXIT
        dir=$work/cache-servers ;;
    *)
        dir=$target
        # Replace only what an earlier run made, never a folder the user keeps something else in.
        if [[ -e $dir && ! -e $dir/.carry-cache-servers ]]; then
            if [[ ! -d $dir || -n $(ls -A "$dir") ]]; then
                echo "carry-cache-servers: $dir exists and was not made by this script; name a new folder" >&2
                exit 1
            fi
        fi ;;
esac
rm -rf "$dir"
pglib=/usr/lib/postgresql/$pgver/lib
mkdir -p "$dir/bin" "$dir/lib" "$dir/usr/bin" "$dir/usr/lib/postgresql/$pgver/bin" "$dir/usr/lib/postgresql/$pgver/lib" \
    "$dir/usr/share/postgresql"
cp -aL "$memcached" "$dir/usr/bin/memcached"
cp -a "$pgbin/initdb" "$pgbin/pg_ctl" "$pgbin/postgres" "$dir/usr/lib/postgresql/$pgver/bin/"
# The loadable modules (plpgsql, text search, encodings), not the JIT (the tier runs with jit = off;
# with LLVM it would not fit the 64 MiB a device call carries).
find "$pglib" -maxdepth 1 -name '*.so' ! -name 'llvmjit*' -exec cp -a -t "$dir/usr/lib/postgresql/$pgver/lib/" {} +
cp -a "/usr/share/postgresql/$pgver" "$dir/usr/share/postgresql/"

# Every library the servers and those modules need, but glibc's (the machine's own glibc loads
# them; these binaries need no newer one than Debian's).
deps=$({
    ldd "$memcached" "$pgbin/postgres" "$pgbin/initdb" "$pgbin/pg_ctl"
    find "$dir/usr/lib/postgresql/$pgver/lib" -name '*.so' -exec ldd {} +
} 2>/dev/null || true)
if grep -q 'not found' <<<"$deps"; then
    echo "carry-cache-servers: a library the servers need is missing here:" >&2
    grep 'not found' <<<"$deps" | sort -u >&2
    exit 1
fi
awk '$2 == "=>" && $3 ~ /^\// {print $3}' <<<"$deps" | sort -u |
    grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-x86-64)\.so' |
    while read -r lib; do cp -L "$lib" "$dir/lib/"; done

wrap() { # name, path of the real binary relative to DIR
    cat > "$dir/bin/$1" <<EOF
#!/bin/sh
# $1 from $2, with the libraries carried beside it (scripts/carry-cache-servers.sh)
d=\$(dirname "\$(readlink -f "\$0")")/..
LD_LIBRARY_PATH="\$d/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec "\$d/$2" "\$@"
EOF
    chmod 755 "$dir/bin/$1"
}
wrap memcached usr/bin/memcached
for tool in initdb pg_ctl postgres; do
    wrap "$tool" "usr/lib/postgresql/$pgver/bin/$tool"
done
touch "$dir/.carry-cache-servers"
chmod -R a+rX "$dir"

if [[ $target == *.tar.xz ]]; then
    # Written aside and renamed, so that an interrupted run leaves no truncated archive.
    tar -C "$work" -cJf "$work/cache-servers.tar.xz" cache-servers
    mv "$work/cache-servers.tar.xz" "$target"
    echo "$target: memcached $("$memcached" -V | cut -d' ' -f2) and PostgreSQL $pgver, $(du -h "$target" | cut -f1)"
else
    echo "$dir: memcached $("$memcached" -V | cut -d' ' -f2) and PostgreSQL $pgver, $(du -sh "$dir" | cut -f1)"
fi
