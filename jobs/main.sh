#!/bin/sh
# The main job: generate the paper-scale synthetic panel, print its summary,
# and run the work-distribution demo stage on it.  Set NP for MPI ranks.
set -e
cd "$(dirname "$0")/.."
NP=${NP:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p out
mpirun --oversubscribe -np "$NP" ./pairbound synth -o out/paper.h5
mpirun --oversubscribe -np "$NP" ./pairbound states out/paper.h5 -o out/states
echo "per-cell five-state counts: out/states/report/states.tsv"
