#pragma once
// The arithmetic drift's CPU work runs with, so that a scenario and seed give the same bits
// whatever the slots, threads, cores or load (docs/outputs.md#machines).

namespace drift {

// One intra-op thread for LibTorch and the OpenMP libraries under it (oneDNN, OpenBLAS), in
// the calling thread, for the threads LibTorch's parallel loops start later, and for the
// processes this one starts (OMP_NUM_THREADS=1 in their environment). Call it first thing in
// main. A reduction split over threads adds in an order that depends on their number, whose
// default is one per core: the coordinator's evaluation and server-side training (FedKTL's)
// then differed with the machine's cores. Parallelism comes from slots.
void use_reproducible_cpu_arithmetic();

// The same for the calling thread alone, once (later calls cost a thread-local check): every
// thread that does tensor work must call it before its first. OpenMP keeps a thread count per
// thread, and a thread that main's call did not reach (a trainer slot's, CAF's scheduler's)
// otherwise ran oneDNN's and OpenBLAS's kernels on one OpenMP thread per core until its first
// LibTorch parallel loop, so a job's bits depended on what its thread had run before: on which
// slot it landed, which depends on timing (measured: a FedBuff DP run on 2 slots wrote other
// metrics under load).
void use_reproducible_cpu_arithmetic_in_this_thread();

// The OpenMP thread count the calling thread's kernels would use (omp_get_max_threads of the
// runtime LibTorch loaded), without setting it; 0 without an OpenMP runtime. For tests.
int openmp_threads_in_this_thread();

}  // namespace drift
