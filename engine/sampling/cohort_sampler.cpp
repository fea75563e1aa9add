#include "engine/sampling/cohort_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace drift {

CohortSampler::CohortSampler(const Scenario& scenario, std::shared_ptr<const Population> population)
    : scenario_(scenario),
      population_(std::move(population)),
      availability_(scenario_, *population_),
      presence_(*population_),
      edges_(*population_),
      timeline_(scenario_, *population_, availability_, presence_),
      sampler_(make_sampler(scenario_.sampler.name, scenario_, *population_)),
      last_loss_(population_->size(), std::nan("")) {}

void CohortSampler::apply(const TimelineStep& step) {
  applied_.push_back(step);
  timeline_.apply_to_world(step.index, step.time, availability_, presence_, edges_);
  const auto& e = timeline_.entry(step.index);
  if (e.action == TimelineAction::sampler) sampler_ = make_sampler(e.sampler, scenario_, *population_);
  if (e.action == TimelineAction::fraction) fraction_override_ = e.value;
}

std::uint32_t CohortSampler::present_count(const SelectionRequest& request) const {
  if (request.edge == 0) return presence_.present_count(request.time);
  return presence_.present_count(edges_.counts_by_group(request.edge - 1), request.time);
}

std::uint32_t CohortSampler::cohort_size(const SelectionRequest& request) const {
  const auto present = present_count(request);
  if (fraction_override_ > 0.0) {
    const auto n = static_cast<std::int64_t>(std::llround(fraction_override_ * present));
    return static_cast<std::uint32_t>(std::clamp<std::int64_t>(n, present > 0 ? 1 : 0, present));
  }
  const auto members =
      request.edge == 0 ? population_->size() : static_cast<std::uint32_t>(edges_.members(request.edge - 1).size());
  return std::min(scenario_.sampler.cohort_size(members), present);
}

// A sync cohort is one call of the sampler; async slots are filled by one call each, every
// client drawn becoming busy before the next call, as if each were dispatched at once.
std::vector<std::uint32_t> CohortSampler::draw(const SelectionRequest& request, std::uint32_t cohort,
                                               std::vector<std::uint32_t>& busy) {
  SelectionContext ctx;
  ctx.round = request.round;
  ctx.time = request.time;
  const double t = request.time;
  ctx.eligible = [this, t, &busy, &request](std::uint32_t c) {
    return in_scope(request, c) && presence_.present(c, t) && !std::binary_search(busy.begin(), busy.end(), c);
  };
  ctx.online = [this, t](std::uint32_t c) { return availability_.online(c, t); };
  ctx.last_loss = &last_loss_;
  if (request.slots == 0) {
    ctx.count = static_cast<std::uint32_t>(std::ceil(request.over_selection * cohort - 1e-9));
    return sampler_->select(ctx);
  }
  std::vector<std::uint32_t> chosen;
  ctx.count = 1;
  for (std::uint32_t i = 0; i < request.slots; ++i) {
    const auto one = sampler_->select(ctx);
    if (one.empty()) break;
    chosen.push_back(one.front());
    busy.insert(std::upper_bound(busy.begin(), busy.end(), one.front()), one.front());
  }
  return chosen;
}

Selection CohortSampler::answer(const SelectionRequest& request) {
  const auto n = population_->size();
  if (!std::is_sorted(request.busy.begin(), request.busy.end()) || (!request.busy.empty() && request.busy.back() >= n))
    throw std::invalid_argument("selection request: busy clients must be ascending ids of the population");
  for (const auto& l : request.losses)
    if (l.client >= n)
      throw std::invalid_argument("selection request: loss of unknown client " + std::to_string(l.client));
  if (request.edge > population_->edges())
    throw std::invalid_argument("selection request: no edge " + std::to_string(request.edge - 1));
  for (const auto& step : request.timeline)
    if (step.index >= scenario_.timeline.size())
      throw std::invalid_argument("selection request: no timeline entry " + std::to_string(step.index));
  for (const auto& l : request.losses) last_loss_[l.client] = l.loss;
  for (const auto& step : request.timeline) apply(step);
  availability_.set_round(request.round);  // participation processes step with sync rounds
  Selection s;
  s.round = request.round;
  s.cohort_size = request.slots == 0 ? cohort_size(request) : 0;
  std::vector<std::uint32_t> busy = request.busy;
  std::uint32_t busy_present = 0;
  for (auto c : busy) busy_present += in_scope(request, c) && presence_.present(c, request.time) ? 1 : 0;
  s.eligible = present_count(request) - busy_present;
  s.clients = draw(request, s.cohort_size, busy);
  if (request.slots == 0 && sampler_->draws_cohort_size())
    s.cohort_size = static_cast<std::uint32_t>(s.clients.size());  // Poisson: the round waits for all it drew
  return s;
}

// The timeline's effects are replayed from the steps applied so far (they rebuild the world's
// replica and the current sampler exactly); then the sampler's counters and the losses.
void CohortSampler::archive(StateArchive& ar) {
  ar.section("sampler");
  std::vector<TimelineStep> steps = applied_;
  ar.vector(steps, [&](TimelineStep& s) {
    ar.value(s.index);
    ar.value(s.time);
  });
  if (ar.loading()) {
    for (const auto& s : steps)
      if (s.index >= scenario_.timeline.size()) throw DecodeError("a checkpoint names an unknown timeline entry");
    if (!applied_.empty()) throw std::logic_error("CohortSampler: restore into a sampler that has answered");
    for (const auto& s : steps) apply(s);
  }
  sampler_->archive(ar);
  ar.values(last_loss_);
  if (last_loss_.size() != population_->size()) throw DecodeError("a checkpoint's sampler is for another population");
}

}  // namespace drift
