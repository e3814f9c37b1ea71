#!/bin/bash
# Example SLURM job: one rank per node, OpenMP threads within each node.
#SBATCH --job-name=pairbound
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=32
#SBATCH --time=00:30:00
set -e
export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
STORE=${STORE:-paper.h5}
OUT=${OUT:-results}
[ -e "$STORE" ] || srun ./pairbound synth -o "$STORE"
srun ./pairbound states "$STORE" -o "$OUT/states"
