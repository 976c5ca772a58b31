#!/usr/bin/env bash
# Every factorisation dp x tp x pp of 1..8 ranks, in fp16 and in bf16, through
# `scaleproof check` (16-bit storage: bitwise against the one-rank reference,
# in the layout's reduction order where tp > 1 or dp > 1). Tiny shapes, 1 or 3
# steps, the schedule, ZeRO stage and checkpointing rotating with the case.
# Usage (from the repository root, after ci/build.sh default scaleproof):
#   results/hybrid16-conformance-20261125/run.sh > results/hybrid16-conformance-20261125/check.log 2>&1
# Each line: W dp tp pp storage set -> the check's exit code and verdict.
set -u
bin=build/default/harness/scaleproof
schedules=(1f1b gpipe interleaved)
i=0
fail=0
for W in 1 2 3 4 5 6 7 8; do
  for tp in $(seq 1 "$W"); do
    for pp in $(seq 1 "$W"); do
      (( W % (tp * pp) == 0 )) || continue
      dp=$(( W / (tp * pp) ))
      for storage in fp16 bf16; do
        sched=${schedules[$(( i % 3 ))]}
        zero=$(( i % 4 ))
        v=1; mb=2
        [[ $sched == interleaved ]] && v=2 && mb=$pp
        [[ $sched == interleaved && $pp == 1 ]] && sched=1f1b && v=1 && mb=2
        heads=$(( tp == 1 ? 2 : tp ))
        layers=$(( pp * v ))
        ckpt=$(( i % 2 ))
        steps=$(( i % 2 == 0 ? 1 : 3 ))
        set_="layers=$layers,hidden=$(( 2 * heads )),heads=$heads,seq=3,batch=$(( dp * mb )),dp=$dp,tp=$tp,pp=$pp,v=$v,mb=$mb,schedule=$sched,zero=$zero,storage=$storage,ckpt=$ckpt,steps=$steps"
        out=$(OMP_NUM_THREADS=1 OMP_PROC_BIND=false mpiexec -n "$W" "$bin" check --technique hybrid_step --set "$set_" 2>&1)
        rc=$?
        verdict=$(grep -o -m1 -E 'PASSED|FAILED' <<<"$out" || echo none)
        echo "W=$W dp=$dp tp=$tp pp=$pp $storage $set_ -> exit $rc $verdict"
        (( rc == 0 )) || { fail=1; echo "$out" | tail -5; }
        i=$(( i + 1 ))
      done
    done
  done
done
echo "any failure: $fail"
exit $fail
