#!/bin/sh
# The main job: `pairbound run` with its compiled-in default (inputs/run.ini):
# generate the paper-scale synthetic panel (if out/paper.h5 is absent) and
# print its summary, run every analysis stage, print the report's tables.
# NP=K runs on K MPI ranks.
set -e
cd "$(dirname "$0")/.."
NP=${NP:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p out
mpirun --oversubscribe --bind-to none -np "$NP" ./pairbound synth -o out/paper.h5
mpirun --oversubscribe --bind-to none -np "$NP" ./pairbound run
