#!/bin/sh
# The main job: `pairbound run` with its compiled-in default (inputs/run.ini):
# generate the paper-scale synthetic panel out/paper.h5 (if absent), run every
# analysis stage into out/run/STAGE/, write out/run/REPORT.md (provenance, every
# table and figure in the seed paper's order) and print a one-screen summary
# on stdout; progress and log messages go to stderr.  NP=K runs on K MPI
# ranks; RESUME=1 keeps the stages an interrupted run already completed.
set -e
cd "$(dirname "$0")/.."
NP=${NP:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# one machine: name the PML Open MPI selects here anyway (ob1), so it does not
# spend ~0.2 s per process start probing the PSM2/libfabric libraries of the
# cm PML (docs/run.md "MPI start-up"); a value already set is kept
export OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}"
mpirun --oversubscribe --bind-to none -np "$NP" ./pairbound run ${RESUME:+--resume}
