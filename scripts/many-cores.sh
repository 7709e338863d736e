#!/usr/bin/env bash
# Projected against measured speedups up to a machine's core count (the check DESIGN.md asks for)
# and the real cache tier's measured speedups for as many replicas as it holds, in one
# call with a time budget, on a many-core Linux machine that may have no Rust toolchain, no
# network and no memcached or PostgreSQL: pack here, carry the folder, check there.
#
#   scripts/many-cores.sh pack DIR [--data CLASSBENCH_DIR]
#       here: DIR gets this tree's release build (stripped), the ClassBench 5k sets Fig. 8 reads
#       (when --data names them) and memcached + PostgreSQL (scripts/carry-cache-servers.sh).
#   scripts/many-cores.sh check DIR OUT [BUDGET_SECONDS [STEP...]]
#       there, from the tree's root ($PYTHON, default python3, with numpy, scipy, matplotlib
#       and rich): the steps (default fig5a fig8 fig11: Fig. 5a, Fig. 8 a and c, Fig. 11, all at
#       quick size), each given an equal share of what is left of the budget (default 540 s) and
#       stopped by Ctrl-C (which keeps the rounds it finished) at its end; OUT/summary.txt holds
#       each run's projected-against-measured line and the machine it ran on.
set -uo pipefail

usage() { sed -n '7,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 2 ]] || usage
action=$1 dir=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
native=$root/python/superlinear/_native.abi3.so

case $action in
pack)
    data=
    if [[ ${1:-} == --data ]]; then data=${2:?--data needs a folder}; fi
    [[ -f $native ]] || { echo "many-cores: no release build at $native: run make build first" >&2; exit 1; }
    mkdir -p "$dir"
    strip -o "$dir/_native.abi3.so" "$native" || exit 1
    if [[ -n $data ]]; then
        mkdir -p "$dir/classbench"
        for set in acl1_5k fw1_5k ipc1_5k; do
            cp "$data/$set" "$data/${set}_trace" "$dir/classbench/" || exit 1
        done
    fi
    "$root/scripts/carry-cache-servers.sh" "$dir/cache-servers.tar.xz" || echo "many-cores: no cache servers packed" >&2
    du -sh "$dir"
    ;;
check)
    [[ $# -ge 1 ]] || usage
    out=$1
    budget=${2:-540}
    [[ $budget =~ ^[0-9]{1,6}$ ]] || { echo "many-cores: the budget must be whole seconds, not '$budget'" >&2; exit 2; }
    [[ -f $dir/_native.abi3.so ]] || { echo "many-cores: $dir holds no _native.abi3.so (make it with pack)" >&2; exit 2; }
    mkdir -p "$out"
    # A new file renamed into place, and only when it differs: a running Python may have it mapped.
    if ! cmp -s "$dir/_native.abi3.so" "$native"; then
        cp "$dir/_native.abi3.so" "$native.carried" && mv "$native.carried" "$native" || exit 1
    fi
    export PYTHONPATH=$root/python PYTHONUNBUFFERED=1
    python=${PYTHON:-python3}
    if [[ -f $dir/cache-servers.tar.xz ]]; then
        tar -C /tmp -xJf "$dir/cache-servers.tar.xz" && export PATH=/tmp/cache-servers/bin:$PATH
    fi
    started=$SECONDS
    steps=("${@:3}")
    ((${#steps[@]})) || steps=(fig5a fig8 fig11)
    declare -A command=(
        [fig5a]="reproduce fig5 --quick --panel a"
        [fig8]="reproduce fig8 --quick --data $dir/classbench --panel a --panel c"
        [fig11]="reproduce fig11 --quick"
    )
    for name in "${steps[@]}"; do
        [[ -n ${command[$name]:-} ]] || { echo "many-cores: unknown step $name (fig5a, fig8, fig11)" >&2; exit 2; }
    done
    echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r)" \
        >"$out/summary.txt"
    ran=()
    for i in "${!steps[@]}"; do
        name=${steps[$i]}
        if [[ $name == fig8 && ! -d $dir/classbench ]]; then
            echo "fig8: skipped, no ClassBench sets packed (pack --data DIR)" >>"$out/summary.txt"
            continue
        fi
        # An equal share of what is left: a step that ends early leaves its time to the next.
        left=$((budget - (SECONDS - started)))
        limit=$((left / (${#steps[@]} - i)))
        if ((limit < 30)); then
            echo "$name: skipped, $left s of the budget left" >>"$out/summary.txt"
            continue
        fi
        echo "== $name ($limit s at most)"
        ran+=("$name")
        rm -rf "${out:?}/$name"  # an earlier check's results are not this one's
        # shellcheck disable=SC2086 # the command's words
        timeout -s INT -k 5 "$limit" "$python" -m superlinear ${command[$name]} --out "$out/$name" >"$out/$name.log" 2>&1
        rc=$?
        case $rc in
            0) what="finished" ;;
            124) what="stopped by Ctrl-C at its $limit s (the rounds it finished are kept)" ;;
            *) what="failed, exit $rc (see $name.log)" ;;
        esac
        echo "$name: $what, $((SECONDS - started)) s into the budget" >>"$out/summary.txt"
    done
    # From the rows each run wrote (an interrupted run has rows but no summary yet).
    "$python" - "$out" "${ran[@]}" >>"$out/summary.txt" <<'EOF'
import json, sys
from pathlib import Path
from superlinear.experiments.agreement import agreement, agreement_lines
for name in sys.argv[2:]:
    path = Path(sys.argv[1]) / name / "result.json"
    if not path.exists():
        print(f"{name}: no result.json (no round finished)")
        continue
    rows = json.loads(path.read_text())["rows"]
    lines = agreement_lines(agreement(rows)) or ["nothing measured"]
    print(f"{name}: {len(rows)} rows; " + " ".join(lines))
EOF
    cat "$out/summary.txt"
    ;;
*)
    usage
    ;;
esac
