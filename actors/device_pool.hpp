#pragma once
#include <caf/fwd.hpp>

#include <memory>
#include <vector>

#include "actors/metrics_sink.hpp"
#include "actors/protocols.hpp"
#include "actors/trainer_slot.hpp"
#include "engine/training/devices.hpp"

namespace drift::actors {

// Owns the trainer slots of every device, local and remote, and a FIFO of jobs. A job goes to
// an idle slot of the least-loaded device; a worker process joins as one more device whose
// slots live across the network. Jobs wait here, never at a worker, so a lost worker loses
// only the jobs it was running: those fail with PoolError::worker_lost, the rest go on
// elsewhere. When no slot remains, every job fails with PoolError::no_slots.
//
// A worker that stops answering (a stopped or wedged process, a dead link the OS has not
// reported yet) is let go: it missed a heartbeat, or one of its jobs ran past its deadline.
// Its running jobs go back to the front of the queue and run elsewhere; a late answer from it
// is ignored. A job's result does not depend on where it runs, so results stay the same.
//
// Its interface is `pool_actor` (actors/protocols.hpp): jobs as a trainer slot takes them,
// workers handed over by the gatekeeper (the pool monitors each agent), `await` (replies once
// at least n workers are live) and `release` (replies once every worker acknowledged the end of
// the run, or after 10 s).
struct WorkerWatch {
  double heartbeat_timeout_s = 10;  // a worker that does not answer a ping within this is let go
  double deadline_factor = 10;      // a job running longer than this many times its worker's mean job
  double deadline_min_s = 60;       // ... and longer than this lets the worker go (no deadline before
                                    // the worker's first finished job)
  // Workers' slots hold a job ahead as local slots do, so they start it without a round trip. A
  // lost worker then loses that job too, so only for workers the run started itself
  // (--slot-processes), whose loss is the run's own failure.
  bool workers_hold_ahead = false;
  std::shared_ptr<WorkerLosses> losses;  // each worker lost or let go, for summary.json (null: not kept)
};

// `lanes`: one more slot on each of these devices (of this process), for evaluations only
// (devices.eval_lanes); every evaluation then waits for a lane.
pool_actor::behavior_type device_pool(pool_actor::pointer self, std::vector<DeviceSlots> local,
                                      std::vector<torch::Device> lanes, SlotContext ctx,
                                      std::shared_ptr<RunObserver> observer, WorkerWatch watch);

}  // namespace drift::actors
