#include "engine/sim/roster.hpp"

#include <algorithm>

namespace drift {

Roster::Roster(const Scenario& scenario, const Population& population)
    : population_(population),
      availability_(scenario, population),
      presence_(population),
      edges_(population),
      busy_(population.size(), 0),
      busy_until_(population.size(), 0.0) {}

bool Roster::eligible(std::uint32_t client, double t) const {
  return presence_.present(client, t) && !busy_[client] && busy_until_[client] <= t;
}

double Roster::offline_between(std::uint32_t client, double from, double until) {
  const double leave = presence_.leave_time(client);
  const double gone = leave < until ? std::max(from, leave) : kNever;
  return std::min(gone, availability_.offline_between(client, from, until));
}

double Roster::next_available(double t) {
  double best = kNever;
  // No client is free before t, so one free at t ends the search.
  for (std::uint32_t c = 0; c < population_.size() && best > t; ++c) best = std::min(best, next_free(c, t, best));
  return best;
}

double Roster::next_available(double t, const std::vector<std::uint32_t>& clients) {
  double best = kNever;
  for (auto c : clients) best = std::min(best, next_free(c, t, best));
  return best;
}

bool Roster::anyone_available(double t) {
  const auto n = static_cast<std::uint32_t>(population_.size());
  for (std::uint32_t k = 0; k < n; ++k) {
    const auto c = (last_available_ + k) % n;
    if (next_free(c, t, kNever) < kNever) {
      last_available_ = c;
      return true;
    }
  }
  return false;
}

// When client c, without a task, is next registered and online from t; kNever when not before `best`.
double Roster::next_free(std::uint32_t c, double t, double best) {
  if (busy_[c]) return kNever;
  const double from = std::max({t, busy_until_[c], presence_.join_time(c)});
  const double leave = presence_.leave_time(c);
  if (from >= leave || from >= best) return kNever;
  const double on = availability_.next_online(c, from);
  return on < leave ? on : kNever;
}

void Roster::set_busy(std::uint32_t client, bool busy) {
  busy_[client] = busy ? 1 : 0;
  if (busy)
    busy_set_.insert(client);
  else
    busy_set_.erase(client);
}

void Roster::work_until(std::uint32_t client, double t) {
  busy_until_[client] = t;
  working_until_[client] = t;
}

std::vector<std::uint32_t> Roster::not_idle(double t) {
  for (auto it = working_until_.begin(); it != working_until_.end();)
    it = it->second <= t ? working_until_.erase(it) : std::next(it);
  std::vector<std::uint32_t> out;
  out.reserve(busy_set_.size() + working_until_.size());
  auto w = working_until_.begin();
  for (auto b = busy_set_.begin(); b != busy_set_.end() || w != working_until_.end();) {
    if (w == working_until_.end() || (b != busy_set_.end() && *b < w->first)) {
      out.push_back(*b++);
    } else {
      if (b != busy_set_.end() && *b == w->first) ++b;
      out.push_back((w++)->first);
    }
  }
  return out;
}

void Roster::archive(StateArchive& ar) {
  ar.section("roster");
  ar.values(busy_);
  ar.set(busy_set_);
  ar.values(busy_until_);
  ar.map(working_until_, [&](double& t) { ar.value(t); });
  if (busy_.size() != population_.size() || busy_until_.size() != population_.size())
    throw DecodeError("a checkpoint's roster is for another population");
}

}  // namespace drift
