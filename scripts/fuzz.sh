#!/usr/bin/env bash
# Fuzzing of cuzk's parsers with AFL++ through afl.rs, on stable Rust
# (docs/fuzzing.md). Targets: params proof c1 post snap (fuzz/src/targets.rs).
#
#   scripts/fuzz.sh build                  install cargo-afl and AFL++ if missing,
#                                          build fuzz/ instrumented (fuzz/target)
#   scripts/fuzz.sh run [TARGET...]        fuzz each target (all by default) at
#                                          nice 19, side by side, until FUZZ_EXECS
#                                          executions (default 10,000,000) or
#                                          FUZZ_SECONDS seconds, whichever first
#   scripts/fuzz.sh report [TARGET...]     executions, crashes, hangs per target
#   scripts/fuzz.sh cmin [TARGET...]       minimize a run's queue into fuzz/corpus/
#   scripts/fuzz.sh replay                 the corpora through the harnesses on the
#                                          normal test build (what CI runs)
#   scripts/fuzz.sh bundle                 gpu-bundle/fuzz: the instrumented binary,
#                                          an afl-fuzz built without Python, the
#                                          shared libraries they need, for a
#                                          many-core machine without Rust
#   scripts/fuzz.sh farm [TARGET...]       on that machine: FUZZ_JOBS AFL instances
#                                          (default: every core) shared among the
#                                          targets (FUZZ_WEIGHTS), one -M and the
#                                          rest -S per target, for FUZZ_SECONDS;
#                                          then the executions summed over the
#                                          instances; results under $OUT/fuzz
#
# A run starts from fuzz/corpus/<target> and the seeds `cuzk-fuzz seeds`
# writes; it resumes where the last one left off (fuzz/out/<target>).
# Crashes and hangs land in fuzz/out/<target>/default/{crashes,hangs}.
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_TARGETS=(params proof c1 post snap)
FUZZ_EXECS=${FUZZ_EXECS:-10000000}
FUZZ_SECONDS=${FUZZ_SECONDS:-86400}
# The child's address-space limit (MiB); the harness's allocator also
# fails any allocation past 256 MiB, or past 1 GiB live (fuzz/src/cap.rs).
FUZZ_MEMORY_MB=${FUZZ_MEMORY_MB:-4096}
FUZZ_TIMEOUT_MS=${FUZZ_TIMEOUT_MS:-5000}
BIN=${FUZZ_BIN:-fuzz/target/release/cuzk-fuzz}
# `farm` writes under the device machine's $OUT when there is one.
FARM_OUT=${OUT:+$OUT/fuzz}
FARM_OUT=${FARM_OUT:-fuzz/out/farm}
OUT=fuzz/out
FUZZ_BUNDLE=${FUZZ_BUNDLE:-gpu-bundle/fuzz}

targets() { if [ $# -gt 0 ]; then echo "$@"; else echo "${ALL_TARGETS[@]}"; fi; }

build() {
    command -v cargo-afl >/dev/null || cargo install --locked cargo-afl
    # The AFL++ runtime for this rustc (a no-op when already built).
    cargo afl config --build >/dev/null 2>&1 || true
    # Several codegen units (afl.rs defaults to one) build the filecoin-proofs
    # tree much faster; gold links their coverage sections.
    (cd fuzz && AFL_OPT_LEVEL=${AFL_OPT_LEVEL:-2} \
        RUSTFLAGS="-C codegen-units=16 -Clink-arg=-fuse-ld=gold" \
        nice -n 19 cargo afl build --release --locked)
}

OUT_IN=$OUT/in
inputs() {  # target: the starting corpus, corpus plus fresh seeds
    local dir=$OUT_IN/$1
    rm -rf "$dir" && mkdir -p "$dir" "$OUT_IN/../seeds"
    "$BIN" seeds "$OUT_IN/../seeds" >/dev/null
    cp fuzz/corpus/"$1"/* "$dir"/ 2>/dev/null || true
    # Small inputs only: AFL spends its time on a 100 KiB C1 output's
    # positions; the full fixtures are replayed by the test instead.
    find "$OUT_IN/../seeds/$1" -type f -size -48k -exec cp {} "$dir"/ \;
}

run() {
    [ -x "$BIN" ] || { echo "fuzz.sh: $BIN missing: scripts/fuzz.sh build" >&2; exit 1; }
    local pids=()
    for t in $(targets "$@"); do
        inputs "$t"
        local dict=()
        [ -f "fuzz/dict/$t.dict" ] && dict=(-x "fuzz/dict/$t.dict")
        AFL_NO_UI=1 AFL_AUTORESUME=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 \
        AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 RAYON_NUM_THREADS=1 \
            nice -n 19 cargo afl fuzz -i "$OUT/in/$t" -o "$OUT/$t" \
            -m "$FUZZ_MEMORY_MB" -t "$FUZZ_TIMEOUT_MS" \
            -E "$FUZZ_EXECS" -V "$FUZZ_SECONDS" "${dict[@]}" -- "$BIN" "$t" >"$OUT/$t.log" 2>&1 &
        pids+=($!)
        echo "fuzz.sh: $t fuzzing (log $OUT/$t.log)"
    done
    local status=0
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    report "$@"
    return $status
}

stat() { sed -n "s/^$2 *: *//p" "$OUT/$1/default/fuzzer_stats" 2>/dev/null; }

report() {
    local failed=0
    printf '%-8s %14s %10s %8s %6s %7s\n' target executions seconds corpus crashes hangs
    for t in $(targets "$@"); do
        local crashes hangs
        crashes=$(stat "$t" saved_crashes) hangs=$(stat "$t" saved_hangs)
        printf '%-8s %14s %10s %8s %6s %7s\n' "$t" "$(stat "$t" execs_done)" \
            "$(stat "$t" run_time)" "$(stat "$t" corpus_count)" "${crashes:-?}" "${hangs:-?}"
        [ "${crashes:-1}" = 0 ] && [ "${hangs:-1}" = 0 ] || failed=1
    done
    [ $failed = 0 ] || echo "fuzz.sh: crashes or hangs (or no run): see $OUT/<target>/default/" >&2
    return $failed
}

cmin() {
    for t in $(targets "$@"); do
        local min=$OUT/min/$t
        rm -rf "$min"
        AFL_SKIP_CPUFREQ=1 RAYON_NUM_THREADS=1 nice -n 19 cargo afl cmin \
            -i "$OUT/$t/default/queue" -o "$min" -m "$FUZZ_MEMORY_MB" -t "$FUZZ_TIMEOUT_MS" \
            -- "$BIN" "$t" >"$OUT/$t.cmin.log" 2>&1
        # The 2 KiB fixtures themselves are replayed from cuzk-filecoin/fixtures:
        # the kept corpus holds only small files.
        find "$min" -type f -size +48k -delete
        rm -rf "fuzz/corpus/$t" && mkdir -p "fuzz/corpus/$t"
        local i=0
        for f in "$min"/*; do
            cp "$f" "fuzz/corpus/$t/$(sha1sum "$f" | cut -c1-16)"
            i=$((i + 1))
        done
        echo "fuzz.sh: $t: $i files in fuzz/corpus/$t ($(du -sh "fuzz/corpus/$t" | cut -f1))"
    done
}

# gpu-bundle/fuzz: what `farm` needs on a machine with no Rust and no
# network. afl.rs's afl-fuzz links the Python it was built with; this one is
# built from the same AFL++ sources without it.
bundle() {
    [ -x "$BIN" ] || { echo "fuzz.sh: $BIN missing: scripts/fuzz.sh build" >&2; exit 1; }
    local src
    src=$(find "$HOME/.local/share/afl.rs" -maxdepth 1 -name AFLplusplus -type d | head -1)
    [ -n "$src" ] || { echo "fuzz.sh: no AFL++ sources under ~/.local/share/afl.rs: scripts/fuzz.sh build" >&2; exit 1; }
    local work=${TMPDIR:-/tmp}/cuzk-aflpp
    rm -rf "$work" && cp -r "$src" "$work"
    (cd "$work" && rm -f afl-fuzz ./*.o src/*.o && make afl-fuzz NO_PYTHON=1 >"$work.log" 2>&1) ||
        { echo "fuzz.sh: building afl-fuzz failed: $work.log" >&2; exit 1; }
    rm -rf "$FUZZ_BUNDLE" && mkdir -p "$FUZZ_BUNDLE/lib"
    cp "$work/afl-fuzz" "$BIN" "$FUZZ_BUNDLE/"
    # Every shared library of the two but glibc's own.
    { ldd "$work/afl-fuzz"; ldd "$BIN"; } | awk '/=> \// {print $3}' | sort -u |
        grep -Ev '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so' |
        while read -r lib; do cp -L "$lib" "$FUZZ_BUNDLE/lib/"; done
    echo "fuzz.sh: $FUZZ_BUNDLE ($(du -sh "$FUZZ_BUNDLE" | cut -f1)): carry it with the tree, then"
    echo "         OUT=\$OUT FUZZ_SECONDS=540 scripts/fuzz.sh farm"
}

# Instances per target: FUZZ_WEIGHTS (target=weight,...) share FUZZ_JOBS out;
# a slower target gets more. Each instance is one process on one core.
farm() {
    local bin=$FUZZ_BUNDLE/cuzk-fuzz afl=$FUZZ_BUNDLE/afl-fuzz
    [ -x "$bin" ] && [ -x "$afl" ] || { echo "fuzz.sh: $FUZZ_BUNDLE incomplete: scripts/fuzz.sh bundle" >&2; exit 1; }
    export LD_LIBRARY_PATH="$PWD/$FUZZ_BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    BIN=$bin
    local jobs=${FUZZ_JOBS:-$(nproc)} weights=${FUZZ_WEIGHTS:-params=5,proof=1,c1=2,post=3,snap=3}
    local results=$FARM_OUT
    OUT_IN=$results/in
    mkdir -p "$results"
    local ts=($(targets "$@")) total=0
    declare -A n
    for t in "${ts[@]}"; do
        local w
        w=$(echo "$weights" | tr ',' '\n' | sed -n "s/^$t=//p")
        n[$t]=${w:-1}; total=$((total + ${w:-1}))
    done
    local pids=()
    for t in "${ts[@]}"; do
        local count=$(( jobs * ${n[$t]} / total )); [ "$count" -ge 1 ] || count=1
        inputs "$t"
        local dict=()
        [ -f "fuzz/dict/$t.dict" ] && dict=(-x "fuzz/dict/$t.dict")
        for i in $(seq 0 $((count - 1))); do
            local role=(-S "s$i"); [ "$i" = 0 ] && role=(-M main)
            AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 \
            AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 RAYON_NUM_THREADS=1 \
                "$afl" -i "$OUT_IN/$t" -o "$results/$t" "${role[@]}" \
                -m "$FUZZ_MEMORY_MB" -t "$FUZZ_TIMEOUT_MS" -V "$FUZZ_SECONDS" "${dict[@]}" \
                -- "$bin" "$t" >"$results/$t.$i.log" 2>&1 &
            pids+=($!)
        done
        echo "fuzz.sh: $t: $count instances"
    done
    for pid in "${pids[@]}"; do wait "$pid" || true; done
    printf '%-8s %10s %14s %10s %6s %7s\n' target instances executions seconds crashes hangs | tee "$results/summary.txt"
    local failed=0
    for t in "${ts[@]}"; do
        local execs=0 secs=0 crashes=0 hangs=0 inst=0 f
        for f in "$results/$t"/*/fuzzer_stats; do
            [ -f "$f" ] || continue
            inst=$((inst + 1))
            execs=$((execs + $(sed -n 's/^execs_done *: *//p' "$f")))
            crashes=$((crashes + $(sed -n 's/^saved_crashes *: *//p' "$f")))
            hangs=$((hangs + $(sed -n 's/^saved_hangs *: *//p' "$f")))
            local r; r=$(sed -n 's/^run_time *: *//p' "$f"); [ "$r" -gt "$secs" ] && secs=$r
        done
        printf '%-8s %10s %14s %10s %6s %7s\n' "$t" "$inst" "$execs" "$secs" "$crashes" "$hangs" | tee -a "$results/summary.txt"
        [ "$inst" -gt 0 ] && [ "$crashes" = 0 ] && [ "$hangs" = 0 ] || failed=1
        # Bring back what matters, not every instance's queue.
        find "$results/$t" -mindepth 2 -maxdepth 2 -name queue ! -path "*/main/*" -exec rm -rf {} +
    done
    return $failed
}

case "${1:-}" in
    build) build ;;
    bundle) bundle ;;
    farm) shift; farm "$@" ;;
    run) shift; run "$@" ;;
    report) shift; report "$@" ;;
    cmin) shift; cmin "$@" ;;
    replay) cargo test --release -p cuzk-filecoin --test fuzz_corpus ;;
    *) sed -n '2,28p' "$0" >&2; exit 2 ;;
esac
