#!/usr/bin/env bash
# Start one model=relay run per calibration cell, side by side (each run is sequential), under relay protocol 2.
#   bash calibration/record.sh [FAMILY__STRATEGY__BUDGET__default ...]   (no argument: every default-size cell below)
#   bash calibration/record.sh --smoke   (code_review and callback_search at smoke size: none@1M and headtail@3k,
#                                         the smoke suite's knobs, max_steps=20, a 64K window)
# Each request then waits in results/relay/p2/CELL/TRIAL/ for a fresh model call (calibration/README.md: the brief;
# examples/relay/pending.py lists the waiting requests and shares answers between byte-identical ones).
set -u
cd "$(dirname "$0")/.."
families="brand_report call_budget failure_memory invoice_audit callback_search code_review people_tracker"
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
cells=("$@")
if [ "$smoke" -eq 1 ]; then
  mkdir -p results/relay/p2/logs
  for cell in code_review__none__1M__smoke code_review__headtail__3k__smoke callback_search__none__1M__smoke \
      callback_search__headtail__3k__smoke; do
    family=${cell%%__*}; rest=${cell#*__}; strategy=${rest%%__*}; rest=${rest#*__}; budget=${rest%%__*}
    case $family in
      code_review) knobs="task.files=8 task.bugs=3 task.max_calls_per_turn=4 task.other_teams=1" ;;
      callback_search) knobs="task.files=24 task.functions_per_file=2 task.grep_cap=60 task.max_calls_per_turn=2" ;;
    esac
    # shellcheck disable=SC2086
    .venv/bin/python -m harness run task="$family" $knobs strategy="$strategy" budget="$budget" seed=0 suite.instances=1 \
      trials=1 max_steps=20 model.context_window=65536 model=relay model.folder="results/relay/p2/$cell" \
      model.timeout=36000 model.poll_s=1 plots=false progress=false hydra.run.dir="calibration/$cell" \
      >"results/relay/p2/logs/$cell.log" 2>&1 &
    echo "started $cell (pid $!)"
  done
  exit 0
fi
if [ ${#cells[@]} -eq 0 ]; then
  for f in $families; do
    cells+=("${f}__none__1M__default")
    for s in headtail sliding_window clear_tool_results summarize; do cells+=("${f}__${s}__8k__default"); done
  done
fi
mkdir -p results/relay/p2/logs
for cell in "${cells[@]}"; do
  family=${cell%%__*}; rest=${cell#*__}; strategy=${rest%%__*}; rest=${rest#*__}; budget=${rest%%__*}
  .venv/bin/python -m harness run task="$family" strategy="$strategy" budget="$budget" seed=0 suite.instances=1 trials=1 \
    max_steps=40 model.context_window=131072 model=relay model.folder="results/relay/p2/$cell" model.timeout=36000 \
    model.poll_s=1 plots=false progress=false hydra.run.dir="calibration/$cell" \
    >"results/relay/p2/logs/$cell.log" 2>&1 &
  echo "started $cell (pid $!)"
done
