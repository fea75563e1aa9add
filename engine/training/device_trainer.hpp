#pragma once
// Local training on a GPU: what a CUDA slot runs for every unpacked job. The job's weights and
// batch schedule go to the device once, its steps never make the host wait, and its weights and
// sums come back in one wait. A step is captured as a CUDA graph once per batch shape and key,
// and replayed in every later job, where the trainer computes the loss itself (the algorithm's
// PackedObjective: cross-entropy, plus FedProx's term) or the algorithm's own loss gives a key
// (ClientAlgorithm::step_graph_key); anything else runs eagerly. Graph and eager steps launch
// the same kernels, so they give the same bits (docs/performance.md#cuda-graphs).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/data/dataset.hpp"
#include "engine/tensors/federated_types.hpp"
#include "engine/training/batch_schedule.hpp"
#include "engine/training/cuda_support.hpp"
#include "engine/training/device_step.hpp"

namespace drift {

class DeviceTrainer {
 public:
  struct Options {
    bool graphs = true;         // devices.graphs: capture and replay steps where the build and the step allow
    bool forbid_syncs = false;  // make any host wait inside the step loop throw (tests)
    // Pad a job's short batches to its full batch size with rows that weigh nothing, where the
    // trainer computes the loss itself and the model's rows do not see each other (no
    // BatchNorm): every step of a run is then one shape, one graph per slot. The padded rows
    // change a step's bits (not its mathematics), so it is decided per run, never per slot.
    bool pad_short_batches = false;
    std::int64_t largest_client = 0;  // > 0: no padding past this many samples (a huge batch size)
  };
  struct Counters {
    std::uint64_t eager_steps = 0, replayed_steps = 0, captures = 0, failed_captures = 0;
  };

  // Trains `model` (on `device`) job after job; the trainer keeps its gradients, momentum
  // buffers and graphs between jobs, and resets what a job must not inherit.
  DeviceTrainer(Model& model, const torch::Device& device, Options options);

  // What train_locally does, with the same batches and augmentation streams. `objective` is the
  // algorithm's PackedObjective when it has one (null otherwise).
  ClientUpdate train(ClientAlgorithm& algorithm, const PackedObjective* objective, const Dataset& data,
                     const std::vector<std::int64_t>& indices, const TrainingTask& task, std::uint32_t client_id,
                     Payload& state, std::uint64_t seed, const AugmentConfig& augment = {});

  const Counters& counters() const { return counters_; }

 private:
  struct GraphKey {
    StepSettings settings;
    const void* images = nullptr;
    const void* labels = nullptr;
    const void* loss_owner = nullptr;  // the algorithm whose loss the step runs; null: the objective's
    std::string step;                  // the algorithm's step_graph_key
    bool padded = false;               // the batch is padded (its indices followed by its weights)
    auto tied() const { return std::tie(images, labels, loss_owner, step, padded); }
    bool operator<(const GraphKey& o) const {
      return settings.key() < o.settings.key() || (!(o.settings.key() < settings.key()) && tied() < o.tied());
    }
  };
  struct Captured {
    torch::Tensor indices;  // the batch's slice of the job's indices, copied in before each replay
    std::unique_ptr<StepGraph> graph;
  };
  // The job's steps (graphs where a step has a key, else eagerly), each followed by the
  // algorithm's after_step; returns the samples seen. `loss_owner` is the algorithm whose loss
  // runs, null when the trainer's objective does. `pad_to` > 0 pads every batch to that size.
  std::uint64_t run_steps(ClientContext& ctx, ClientAlgorithm& algorithm, const BatchSchedule& schedule,
                          const StepLoss& loss, double mu, const ClientAlgorithm* loss_owner,
                          const AugmentConfig& augment, std::int64_t pad_to);
  // One step run eagerly: the batch `batch` describes, augmented when asked.
  void eager_step(ClientContext& ctx, const BatchSchedule::Step& step, const torch::Tensor& batch,
                  const torch::Tensor& black, const StepLoss& loss, const StepSettings& settings,
                  const AugmentConfig& augment, std::int64_t pad_to);
  // The key of this step's graph; nothing when it runs eagerly.
  std::optional<GraphKey> graph_key(const ClientContext& ctx, const StepSettings& settings,
                                    const ClientAlgorithm* loss_owner, const AugmentConfig& augment, bool padded) const;
  // Replays (capturing first if needed) the step for this batch; false when it must run eagerly.
  bool replay(const Dataset& data, const torch::Tensor& slice, const GraphKey& key, const StepLoss& loss);
  // One step on the batch `slice` describes: its indices, or for a padded batch of `padded` rows
  // its indices then its rows' weights. Eager and captured steps both run it.
  void step_on(const Dataset& data, const torch::Tensor& slice, std::int64_t padded, const StepLoss& loss,
               const StepSettings& settings);
  // The batch size this job's short batches are padded to; 0: none.
  std::int64_t padding_for(const TrainingTask& task, const BatchSchedule& schedule, bool own_objective,
                           const AugmentConfig& augment) const;

  Model& model_;
  torch::Device device_;
  Options options_;
  bool graphs_possible_ = false;
  bool job_capturable_ = false;  // the job trains nothing but the model (no extra_parameters)
  StepState state_;
  GraphPool pool_{0, 0};
  std::map<GraphKey, Captured> graphs_;
  std::set<GraphKey> warmed_;      // shapes that ran eagerly once on this trainer's stream
  std::set<GraphKey> eager_only_;  // shapes whose capture failed
  Counters counters_;
};

}  // namespace drift
