#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (AddressSanitizer + UBSan) into
# build-fuzz/ and runs each for N seconds (default 60), one after another. Prints per target the
# executions, the corpus size and the findings (crash, leak, timeout or out-of-memory inputs),
# and exits 1 if there is any. First every kept regression input (tests/fuzz/regressions/<target>)
# is run once: a fixed bug that comes back is a finding too.
#   scripts/fuzz.sh [seconds per target]        LLMPROF_FUZZ_TARGETS="csv config" to pick targets
# LLMPROF_FUZZ_SEED=N fixes libFuzzer's seed (default: a new one each run): with a fresh corpus
# folder the same seed mutates the same way, so a finding of scripts/test.sh (seed 1) reproduces.
# The corpus grows in build-fuzz/corpus/<target>/, seeded from configs/ and the test fixtures;
# findings land in build-fuzz/findings/<target>/, each run's log in build-fuzz/logs/<target>.log.
# The tokenizer targets read shared/data/vocab beside the checkout ($LLMPROF_SHARED_DATA), or the
# tiny vocabularies of the test fixtures when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build_dir=${LLMPROF_FUZZ_BUILD_DIR:-build-fuzz}
scripts/install_deps.sh clang-14 libclang-rt-14-dev >/dev/null  # Debian 12's clang and libFuzzer

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DLLMPROF_FUZZ=ON -DLLMPROF_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target fuzz_targets

# Seeds of each target: the project's own files (a folder is taken whole), listed in
# tests/fuzz/seeds.txt, which the ordinary build's replay tests read too.
declare -A seeds=()
while read -r target folders; do
  [[ -z $target || $target == \#* ]] && continue
  seeds[$target]=$folders
done <tests/fuzz/seeds.txt
declare -A seed_names=([config]='*.yaml *.json' [csv]='*.csv *.tsv' [summary]='summary.json'
                       [steps]='steps.csv' [sweep]='sweep.csv' [safetensors]='*.safetensors'
                       [gpu_fixture]='*.jsonl' [env]='env.json' [eval_doc]='eval.json'
                       [bench_doc]='bench.json' [sweep_doc]='plan.json sweep.json *.point.json')
targets=${LLMPROF_FUZZ_TARGETS:-$(printf '%s\n' "${!seeds[@]}" | sort | tr '\n' ' ')}

findings_total=0
printf '%-16s %12s %8s %9s\n' target executions corpus findings
for t in $targets; do
  corpus=$build_dir/corpus/$t findings=$build_dir/findings/$t log=$build_dir/logs/$t.log
  rm -rf "$findings"
  mkdir -p "$corpus" "$findings" "$build_dir/logs"
  set -f  # the name patterns are for find, not the shell
  for src in ${seeds[$t]}; do  # copied in under a name from their path, so none collide
    for pattern in ${seed_names[$t]:-*}; do
      find "$src" -type f -name "$pattern" -size -256k | while read -r f; do
        cp -n "$f" "$corpus/seed_${f//\//_}"
      done
    done
  done
  set +f
  [ "$t" = dataset ] && gzip -9nc tests/fuzz/corpus/dataset/imdb_like.csv >"$corpus/seed_gz"
  bin=$build_dir/tests/fuzz/fuzz_$t
  regressions=(tests/fuzz/regressions/$t/*)
  status=0
  if [ -e "${regressions[0]}" ]; then
    "$bin" -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$findings/" "${regressions[@]}" \
      >"$log" 2>&1 || status=$?
  fi
  if [ $status -eq 0 ]; then
    "$bin" -max_total_time="$seconds" -seed="${LLMPROF_FUZZ_SEED:-0}" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" >>"$log" 2>&1 || status=$?
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  found=$(find "$findings" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
          -o -name 'oom-*' \) | wc -l)
  [ $status -ne 0 ] && [ "$found" -eq 0 ] && found=1  # failed without leaving an input
  printf '%-16s %12s %8s %9s\n' "$t" "${execs:-0}" "$(find "$corpus" -type f | wc -l)" "$found"
  if [ "$found" -ne 0 ]; then
    grep -a -m1 -B2 -A12 -E '^==[0-9]+==ERROR|runtime error|property failed|deadly signal' "$log" |
      sed 's/^/    /' || tail -20 "$log" | sed 's/^/    /'
    find "$findings" -type f | sed 's/^/    input: /'
  fi
  findings_total=$((findings_total + found))
done
echo "fuzz.sh: ${seconds}s per target, $findings_total finding(s)"
[ "$findings_total" -eq 0 ]
