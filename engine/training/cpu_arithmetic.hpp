#pragma once
// The arithmetic drift's CPU work runs with, so that a scenario and seed give the same bits
// whatever the slots, threads or cores (docs/outputs.md#machines).

namespace drift {

// Gives LibTorch one intra-op thread, in the calling thread and in every thread started after.
// Call it first thing in main, before any thread starts or any tensor is made: a thread takes
// the process's count at its first parallel operation and keeps it. A reduction LibTorch splits
// over threads adds in an order that depends on their number, and its default is one per core:
// the coordinator's evaluation and server-side training (FedKTL's) then differed with the cores
// of the machine and with which thread of CAF's ran them. Parallelism comes from slots (and from
// OpenBLAS, whose products split rows and columns, never a sum).
void use_reproducible_cpu_arithmetic();

}  // namespace drift
