# SPDX-License-Identifier: MIT
# Environment for running jsmf with Open MPI on a small machine or as root (sourced).
# Open MPI refuses to run as root unless told; CI and containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One BLAS thread per rank: ranks x threads must not exceed the cores.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
# Containers often forbid the cross-memory-attach syscalls of Open MPI's shared-memory
# transport; the copy-in/copy-out fallback works everywhere.
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
# OpenBLAS 0.3.21 does not recognise some virtualized CPUs ("Intel Xeon Processor") and
# falls back to its SSE3 (Prescott) kernels: 5x slower DGEMM here (16 vs 80 GFLOP/s).
# Name the core from the CPU's flags unless the user already did.
if [[ -z ${OPENBLAS_CORETYPE:-} && -r /proc/cpuinfo ]]; then
  if grep -qw avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX
  elif grep -qw avx2 /proc/cpuinfo; then export OPENBLAS_CORETYPE=Haswell
  fi
fi
