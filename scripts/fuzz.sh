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
BIN=fuzz/target/release/cuzk-fuzz
OUT=fuzz/out

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

inputs() {  # target: the starting corpus, corpus plus fresh seeds
    local dir=$OUT/in/$1
    rm -rf "$dir" && mkdir -p "$dir" "$OUT/seeds"
    "$BIN" seeds "$OUT/seeds" >/dev/null
    cp fuzz/corpus/"$1"/* "$dir"/ 2>/dev/null || true
    # Small inputs only: AFL spends its time on a 100 KiB C1 output's
    # positions; the full fixtures are replayed by the test instead.
    find "$OUT/seeds/$1" -type f -size -48k -exec cp {} "$dir"/ \;
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

case "${1:-}" in
    build) build ;;
    run) shift; run "$@" ;;
    report) shift; report "$@" ;;
    cmin) shift; cmin "$@" ;;
    replay) cargo test --release -p cuzk-filecoin --test fuzz_corpus ;;
    *) sed -n '2,18p' "$0" >&2; exit 2 ;;
esac
