#pragma once
// What becomes of a job the device pool gave back unfinished: the rules the server follows,
// apart from the messaging that tells it so.
#include <cstdint>
#include <string>

namespace drift {

// Why the pool gave a job back unfinished.
enum class JobLoss : std::uint8_t { worker_lost, no_slots, error };

// A training job: with no trainer slot left the run cannot go on; otherwise the job has an
// outcome (a lost worker's client is a dropout to the federation, any other error a failure).
inline bool training_loss_ends_run(JobLoss loss) { return loss == JobLoss::no_slots; }

// An evaluation chunk whose worker was lost runs again elsewhere (where it runs does not change
// its result); any other loss ends the run, with evaluation_failure's reason.
inline bool evaluation_runs_again(JobLoss loss) { return loss == JobLoss::worker_lost; }
inline std::string evaluation_failure(JobLoss loss, const std::string& error) {
  return loss == JobLoss::no_slots ? error : "evaluation failed: " + error;
}

}  // namespace drift
