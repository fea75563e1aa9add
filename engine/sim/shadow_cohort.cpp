#include "engine/sim/shadow_cohort.hpp"

#include "engine/sim/sim_archive.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/rng.hpp"
#include "engine/sim/update_drift.hpp"

namespace drift {
namespace {

// Shadow jobs live in their own id space, so the task planner's job ids (which key the dropout
// stream) are the same whether shadows run or not.
constexpr std::uint64_t kShadowJobBase = std::uint64_t{1} << 62;

}  // namespace

std::size_t ShadowCohort::launch(std::uint32_t round, const std::vector<std::uint32_t>& cohort,
                                 const std::shared_ptr<const TrainingTask>& task, JobRunner& runner) {
  jobs_.clear();
  const auto wanted = static_cast<std::size_t>(scenario_.simulation.shadow_clients);
  if (wanted == 0) return 0;
  std::vector<char> selected(population_.size(), 0);
  for (auto c : cohort) selected.at(c) = 1;
  std::vector<std::uint32_t> others;
  for (std::uint32_t c = 0; c < population_.size(); ++c)
    if (!selected[c] && !population_.is_held_out(c)) others.push_back(c);
  not_selected_ = others.size();
  auto rng = make_stream(scenario_.seed, "shadow", {round});
  rng.shuffle(others);
  others.resize(std::min(wanted, others.size()));
  std::sort(others.begin(), others.end());
  for (auto c : others) jobs_.emplace(kShadowJobBase + next_job_++, Job{c, false, {}});
  for (const auto& [id, job] : jobs_) runner.launch_counterfactual(id, job.client, task);
  return jobs_.size();
}

bool ShadowCohort::answer(std::uint64_t job, JobOutcome outcome) {
  auto& j = jobs_.at(job);
  if (j.answered) return false;
  j.answered = true;
  j.outcome = std::move(outcome);
  return true;
}

void ShadowCohort::report(RoundReport& r, const NamedTensors& global, const std::vector<ClientUpdate>& aggregated,
                          std::uint64_t version) {
  if (scenario_.simulation.shadow_clients == 0) return;
  std::vector<const ClientUpdate*> cohort, shadow;
  for (const auto& u : aggregated)
    if (u.model_version == version) cohort.push_back(&u);  // stale updates started elsewhere
  for (const auto& [id, j] : jobs_) {
    if (!j.outcome.ok) continue;
    shadow.push_back(&j.outcome.update);
    ++r.shadow_clients;
    r.shadow_samples += j.outcome.update.num_samples;
  }
  const auto d = update_drift(global, cohort, shadow, not_selected_);
  r.update_drift = d.relative_l2;
  r.update_cosine = d.cosine;
  jobs_.clear();
}

void ShadowCohort::archive(StateArchive& ar) {
  ar.section("shadow");
  ar.value(not_selected_);
  ar.value(next_job_);
  ar.map(jobs_, [&](Job& j) {
    ar.value(j.client);
    ar.value(j.answered);
    archive_outcome(ar, j.outcome);
  });
}

}  // namespace drift
