#!/usr/bin/env bash
# Issue 33 item 4: joule and its peers at 1-16 threads on a lent many-core machine, and
# joule's scaling model held against the measurement. Run from the repo root:
#
#   bash benches/device/scaling.sh BIN_DIR OUT_DIR
#
# BIN_DIR holds `compare` and `scaling`, release builds of joule-benches' binaries made
# on the project machine (`--features peer-box3d,rapier3d/parallel`, stripped; the other
# machine has no Rust toolchain). Results go to OUT_DIR as they come, so a run cut short
# still returns what it measured:
#
# - machine.txt   cores and CPU model;
# - compare.md    the compare runner at 1, 2, 4, 8, 16 threads, one run each, joule,
#                 Rapier (parallel) and Box3D, scene by scene (cheap scenes first);
# - scaling.md    the scaling model from joule's one-thread trace, per scene, with the
#                 measured time and speed-up at each thread count beside its prediction;
# - amdahl.md     Amdahl's law fitted to each engine's 1- and 2-thread times from
#                 compare.md, beside its measured speed-ups;
# - before.md     joule as main built it (BIN_DIR/compare-main, if there) at 1 and 2
#                 threads: the before of issue 33 item 3 on a quiet machine.
#
# Time: the compare part stops starting scenes after COMPARE_BUDGET seconds (default
# 190), the before part after BEFORE_BUDGET (230), the model part after TOTAL_BUDGET
# (330), all from the start; on the project's 2-core machine one compare pass at 1 and 2
# threads over these scenes took about 2 minutes.
set -u
BIN=${1:?usage: scaling.sh BIN_DIR OUT_DIR}
OUT=${2:?usage: scaling.sh BIN_DIR OUT_DIR}
mkdir -p "$OUT"
THREADS=${THREADS:-1,2,4,8,16}
COMPARE_BUDGET=${COMPARE_BUDGET:-190}
BEFORE_BUDGET=${BEFORE_BUDGET:-230}
TOTAL_BUDGET=${TOTAL_BUDGET:-330}
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }

{
    echo "date: $(date -u)"
    echo "nproc: $(nproc)"
    grep -m1 'model name' /proc/cpuinfo
    echo "threads: $THREADS"
} | tee "$OUT/machine.txt"

# Cheapest first, so a short budget still covers most scenes.
for scene in pyramid20 pyramid_big chain_joints free10k rain4k many_pyramids terrain; do
    left=$(( COMPARE_BUDGET - $(elapsed) ))
    if [ "$left" -le 0 ]; then
        echo "compare: budget spent, $scene skipped" | tee -a "$OUT/compare.md"
        continue
    fi
    echo "== compare $scene at $(elapsed) s" >&2
    timeout $(( left + 60 )) "$BIN/compare" --threads "$THREADS" --runs 1 --scenes "$scene" \
        --engines joule,rapier,box3d | grep -v '^- ' | tee -a "$OUT/compare.md"
done
"$BIN/scaling" --amdahl "$OUT/compare.md" | tee "$OUT/amdahl.md"

# Issue 33 item 3, before and after on a quiet machine: joule as main built it
# (compare-main, if BIN_DIR has it) at 1 and 2 threads; compare.md's joule rows are after.
if [ -x "$BIN/compare-main" ]; then
    for scene in pyramid20 pyramid_big chain_joints free10k rain4k many_pyramids; do
        left=$(( BEFORE_BUDGET - $(elapsed) ))
        if [ "$left" -le 0 ]; then
            echo "before: budget spent, $scene skipped" | tee -a "$OUT/before.md"
            continue
        fi
        echo "== before (main) $scene at $(elapsed) s" >&2
        timeout $(( left + 20 )) "$BIN/compare-main" --threads 1,2 --runs 1 --scenes "$scene" \
            --engines joule | grep -v '^- ' | tee -a "$OUT/before.md"
    done
fi

for scene in pyramid20 pyramid_big chain_joints free10k rain4k many_pyramids terrain; do
    left=$(( TOTAL_BUDGET - $(elapsed) ))
    if [ "$left" -le 0 ]; then
        echo "scaling: budget spent, $scene skipped" | tee -a "$OUT/scaling.md"
        continue
    fi
    echo "== scaling $scene at $(elapsed) s" >&2
    timeout $(( left + 20 )) "$BIN/scaling" --threads "$THREADS" --measure --samples 8 \
        --scenes "$scene" | tee -a "$OUT/scaling.md"
done
echo "done in $(elapsed) s" | tee -a "$OUT/machine.txt"
