#!/usr/bin/env bash
# The tiny preset on the CPU for a few steps: the loss falls, a run resumed from a checkpoint
# repeats the uninterrupted run's losses bit for bit, generate samples from the checkpoint, and
# bad input gives clear errors. Usage: test_train.sh FERRITE_BINARY WORK_DIR DATA_PATH
set -euo pipefail
ferrite=$1 work=$2 data=$3
# One thread: on a machine whose cores other jobs share, two OpenMP threads wait on each other
# at every op (the runs are bit-identical either way).
export OMP_NUM_THREADS=1
rm -rf "$work" && mkdir -p "$work" && cd "$work"
common=(--preset tiny --device cpu --data "$data" --batch 4 --log-every 1 --eval-every 0 --schedule-steps 12 --warmup 2)

"$ferrite" train "${common[@]}" --steps 12 --json full.json > full.txt
"$ferrite" train "${common[@]}" --steps 6 --checkpoint half.safetensors --json first.json > /dev/null
"$ferrite" train "${common[@]}" --steps 12 --resume half.safetensors --checkpoint end.safetensors --json second.json > resumed.txt

losses() { grep '"event":"step"' "$1" | sed 's/.*"step":\([0-9]*\),"loss":\([^,]*\),.*/\1 \2/'; }
losses full.json > full.losses
cat <(losses first.json) <(losses second.json) > resumed.losses
if ! diff full.losses resumed.losses; then
  echo "FAIL: the resumed run's losses differ from the uninterrupted run's"; exit 1
fi
first=$(head -1 full.losses | cut -d' ' -f2) last=$(tail -1 full.losses | cut -d' ' -f2)
if ! awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 0.5) }'; then
  echo "FAIL: the loss did not fall (step 1: $first, step 12: $last)"; exit 1
fi
echo "loss $first -> $last over 12 steps; resume from step 6 repeats steps 7-12 bit for bit"

# Dropout: the loss still falls, and a resumed run draws the same masks (the generator's state
# is in the checkpoint), so it repeats the uninterrupted run bit for bit.
"$ferrite" train "${common[@]}" --dropout 0.1 --steps 12 --json drop_full.json > /dev/null
"$ferrite" train "${common[@]}" --dropout 0.1 --steps 6 --checkpoint drop_half.safetensors --json drop_first.json > /dev/null
"$ferrite" train "${common[@]}" --steps 12 --resume drop_half.safetensors --json drop_second.json > /dev/null
losses drop_full.json > drop_full.losses
cat <(losses drop_first.json) <(losses drop_second.json) > drop_resumed.losses
diff drop_full.losses drop_resumed.losses > /dev/null ||
  { echo "FAIL: with --dropout 0.1 the resumed run's losses differ from the uninterrupted run's"; exit 1; }
diff drop_full.losses full.losses > /dev/null && { echo "FAIL: --dropout 0.1 changed nothing"; exit 1; }
first=$(head -1 drop_full.losses | cut -d' ' -f2) last=$(tail -1 drop_full.losses | cut -d' ' -f2)
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 0.5) }' ||
  { echo "FAIL: with dropout the loss did not fall (step 1: $first, step 12: $last)"; exit 1; }
echo "dropout 0.1: loss $first -> $last; the resumed run (dropout from the checkpoint) repeats it bit for bit"

# --profile times the steps phase by phase without changing them: the same losses, and a table.
"$ferrite" train "${common[@]}" --steps 3 --json profiled.json --profile > profiled.txt
"$ferrite" train "${common[@]}" --steps 3 --json plain.json > /dev/null
diff <(losses plain.json) <(losses profiled.json) > /dev/null || { echo "FAIL: --profile changed the losses"; exit 1; }
for phase in "matmul (bwd)" "attention" "adamw" "profiled step"; do
  grep -q "^  $phase " profiled.txt || { echo "FAIL: --profile printed no '$phase' row"; cat profiled.txt; exit 1; }
done
grep -q "^profile: 2 steps" profiled.txt || { echo "FAIL: --profile should time the 2 steps after the first"; exit 1; }

# Gradient accumulation: two micro-batches per step.
"$ferrite" train "${common[@]}" --steps 2 --accum 2 --json accum.json > /dev/null
[ "$(losses accum.json | wc -l)" -eq 2 ] || { echo "FAIL: --accum 2 did not log 2 steps"; exit 1; }

out=$("$ferrite" generate --checkpoint end.safetensors --device cpu --prompt "The " --tokens 20)
[ "${#out}" -ge 20 ] || { echo "FAIL: generate printed '$out'"; exit 1; }

# Bad input: exit status 1 and a message naming the problem.
expect_error() {  # expect_error FRAGMENT ARGS...
  local fragment=$1; shift
  if "$ferrite" "$@" > out.txt 2> err.txt; then echo "FAIL: '$*' succeeded"; exit 1; fi
  grep -q -- "$fragment" err.txt || { echo "FAIL: '$*' said: $(cat err.txt) (expected '$fragment')"; exit 1; }
}
: > empty.txt
printf 'short text' > short.txt
expect_error "does not exist" train --device cpu --data missing.txt --steps 1
expect_error "is empty" train --device cpu --data empty.txt --steps 1
expect_error "needs at least" train --device cpu --data short.txt --steps 1
expect_error "but --preset gpt2-small is" train --preset gpt2-small --device cpu --data "$data" --resume end.safetensors
expect_error "does not exist" train --device cuda:7 --data "$data" --steps 1
expect_error "not a safetensors file" generate --checkpoint short.txt --device cpu
expect_error "unknown preset" train --preset huge --device cpu --data "$data"
expect_error "--dropout: Value 1 not in range" train --device cpu --data "$data" --dropout 1 --steps 1
echo "error cases ok"
