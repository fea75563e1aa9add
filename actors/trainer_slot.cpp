#include "actors/trainer_slot.hpp"

#include <csignal>
#include <optional>

#include "actors/wire.hpp"
#include "engine/compose/client_models.hpp"
#include "engine/core/error.hpp"
#include "engine/core/phase_times.hpp"
#include "engine/training/cpu_arithmetic.hpp"
#include "engine/training/cuda_support.hpp"
#include "engine/training/device_data.hpp"
#include "engine/training/device_transfer.hpp"
#include "engine/training/local_training.hpp"
#include "messages/codec.hpp"
#include "messages/pack_codec.hpp"

namespace drift::actors {
namespace {

// Built lazily on the slot's own thread, then reused for every job.
struct SlotWorkspace {
  std::unique_ptr<ClientModels> models;
  std::unique_ptr<ClientAlgorithm> algorithm;

  void ensure(const SlotContext& ctx, const torch::Device& device) {
    use_reproducible_cpu_arithmetic_in_this_thread();  // the slot's own thread (detached)
    if (models) return;
    use_own_stream(device);
    use_blocking_waits(device);
    const auto& s = *ctx.scenario;
    models = std::make_unique<ClientModels>(s, *ctx.data, device);
    algorithm = find_algorithm(s.algorithm)->make_client(s.algorithm_params);
  }
};

}  // namespace

slot_actor::behavior_type trainer_slot(slot_actor::pointer, torch::Device device, SlotContext ctx) {
  auto workspace = std::make_shared<SlotWorkspace>();
  return {
      [=](train_atom, const Buffer& state_buffer, const Buffer& task_buffer) -> caf::result<Buffer, Buffer> {
        if (ctx.crash_countdown && --*ctx.crash_countdown == 0) ::raise(SIGKILL);
        const GpuWorkScope gpu_work(device);
        const PhaseScope timed("slot: training job");
        try {
          workspace->ensure(ctx, device);
          std::optional<PhaseScope> phase(std::in_place, "slot: decode task and state");
          const auto task = msg::decode_task(task_buffer);
          auto state = msg::decode_client_state(state_buffer);
          phase.emplace("slot: train");
          auto update = workspace->models->train(*workspace->algorithm, task, state.client_id, state.state);
          phase.emplace("slot: encode update and state");
          auto update_buffer = msg::encode_update(update);
          auto new_state = msg::encode_client_state(state);
          return {std::move(update_buffer), std::move(new_state)};
        } catch (const std::exception& e) {
          return caf::make_error(caf::sec::runtime_error, std::string(e.what()));
        }
      },
      [=](eval_atom, const Buffer& job_buffer, const Buffer& weights_buffer) -> caf::result<Buffer> {
        const GpuWorkScope gpu_work(device);
        const PhaseScope timed("slot: evaluation job");
        try {
          workspace->ensure(ctx, device);
          const auto job = msg::decode_eval_job(job_buffer);
          const auto& test = workspace->models->test_data();
          if (job.end > static_cast<std::uint64_t>(test.size()))
            throw DecodeError("evaluation range ends past the test set");
          auto& model = workspace->models->shared_model();
          load_state_on_device(model, msg::decode_bundle(weights_buffer), device);
          auto result = evaluate_range(model, test, job.begin, job.end, ctx.scenario->evaluation.batch_size, device,
                                       job.per_sample);
          return msg::encode_eval_result(result);
        } catch (const std::exception& e) {
          return caf::make_error(caf::sec::runtime_error, std::string(e.what()));
        }
      },
      [=](pack_atom, const Buffer& task_buffer, const Buffer& pack_buffer) -> caf::result<Buffer> {
        if (ctx.crash_countdown && --*ctx.crash_countdown == 0) ::raise(SIGKILL);
        const GpuWorkScope gpu_work(device);
        try {
          workspace->ensure(ctx, device);
          const auto clients = msg::decode_pack_job(pack_buffer);
          auto outcomes = workspace->models->train_pack(msg::decode_task(task_buffer), clients);
          std::vector<msg::PackedReply> replies;
          for (std::size_t i = 0; i < clients.size(); ++i) {
            auto& o = outcomes[i];
            replies.push_back({clients[i], o.error.empty() ? msg::encode_update(o.update) : Buffer{}, o.error});
          }
          return msg::encode_pack_result(replies);
        } catch (const std::exception& e) {
          return caf::make_error(caf::sec::runtime_error, std::string(e.what()));
        }
      },
  };
}

}  // namespace drift::actors
