#pragma once
// Client selection policies, one file each. A sampler never sees a materialised list of the
// population: it draws candidates and asks the context whether they are eligible, so a
// round costs O(cohort), not O(population). Every call draws from its own
// ("sample", call number) stream, so cohorts are a pure function of the seed and of the
// simulation's event order.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/config/catalog.hpp"
#include "engine/config/param_table.hpp"
#include "engine/config/scenario.hpp"
#include "engine/core/rng.hpp"
#include "engine/core/state_archive.hpp"

namespace drift {

struct Population;

struct SelectionContext {
  std::uint32_t round = 0;                         // round (sync) or aggregation index + 1 (async)
  double time = 0.0;                               // virtual time of the selection
  std::uint32_t count = 0;                         // how many clients to select
  std::function<bool(std::uint32_t)> eligible;     // registered, present and idle
  std::function<bool(std::uint32_t)> online;       // what availability-aware samplers may ask
  const std::vector<double>* last_loss = nullptr;  // latest training loss per client, NaN if none
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  // Up to ctx.count distinct eligible clients, ascending. Fewer only when fewer are eligible.
  // A sampler that draws its cohort's size ignores ctx.count (draws_cohort_size()).
  virtual std::vector<std::uint32_t> select(const SelectionContext& ctx) = 0;
  // Whether the sampler decides the cohort's size itself (Poisson), ignoring ctx.count: the
  // round then waits for every client it drew.
  virtual bool draws_cohort_size() const { return false; }
  // What a later call depends on (its call counter, a cursor), for checkpoints.
  virtual void archive(StateArchive& ar) = 0;
};

// What every sampler that draws at random shares: the scenario's seed and a count of its calls.
// Each call draws from its own (purpose, call number) stream, so a cohort is a pure function of
// the seed and of how many selections came before, and a checkpoint holds the count alone. A
// sampler with no other state derives from it and writes select() only.
class SeededSampler : public Sampler {
 public:
  explicit SeededSampler(std::uint64_t seed, std::string purpose = "sample")
      : seed_(seed), purpose_(std::move(purpose)) {}
  void archive(StateArchive& ar) override { ar.value(calls_); }

 protected:
  Rng next_call_stream() { return make_stream(seed_, purpose_, {calls_++}); }

 private:
  std::uint64_t seed_;
  std::string purpose_;
  std::uint64_t calls_ = 0;
};

// The sampling design a sampler executes in sync rounds: what the privacy accountant may
// amplify by (docs/privacy.md#which-epsilon).
enum class SamplingDesign {
  none,        // anything else: no amplification is claimed
  poisson,     // each client independently with one probability
  fixed_size,  // a cohort of fixed size, uniformly without replacement
};

// One entry per sampler: its name, what it does, its parameters (keys of [sampler] beside
// name, clients_per_round and fraction, docs/development.md#adding-a-sampler), how it is made,
// and what validation and the privacy accountant must know of it. Every decision about a
// sampler reads these fields, never its name.
struct SamplerInfo {
  using Factory = std::function<std::unique_ptr<Sampler>(const Scenario&, const Population&)>;
  SamplerInfo() = default;
  // A constructor rather than an aggregate, so that a plugin's row may leave the privacy fields
  // at their defaults without a missing-initializer warning. A sampler with parameters is made
  // by sampler_info() below.
  SamplerInfo(std::string name_, std::string description_, Factory make_, SamplingDesign design_ = SamplingDesign::none,
              std::optional<std::string> reads_ = std::nullopt)
      : name(std::move(name_)),
        description(std::move(description_)),
        make(std::move(make_)),
        design(design_),
        reads(std::move(reads_)) {}

  std::string name;
  std::string description;
  Factory make;
  // The sampling design it executes in sync rounds. A Poisson sampler draws its cohort's size
  // itself, so validation refuses it where the cohort's size is the scenario's to set (async
  // modes, over-selection, a timeline that changes the cohort); privacy.denominator = "actual"
  // needs fixed_size.
  SamplingDesign design = SamplingDesign::none;
  // What it reads of the clients' data to choose them ("sizes", "training losses"); "" for
  // nothing. Unset (a plugin that does not say) counts as reading it: the per-client guarantee
  // then counts every aggregation for every client, as it must for a data-dependent choice.
  std::optional<std::string> reads;
  // Its own keys of [sampler], read into Scenario::sampler.params by validation.
  std::vector<ParamSpec> params;
};

// A sampler with parameters: `params` binds its keys to the members of Options, and `make`
// receives them read, as make(const Options&, const Scenario&, const Population&).
template <class Options, class Make>
SamplerInfo sampler_info(std::string name, std::string description, const ParamTable<Options>& params, Make make,
                         SamplingDesign design = SamplingDesign::none,
                         std::optional<std::string> reads = std::nullopt) {
  SamplerInfo info(
      std::move(name), std::move(description),
      [params, make = std::move(make)](const Scenario& s, const Population& p) {
        return make(params.read(s.sampler.params), s, p);
      },
      design, std::move(reads));
  info.params = params.specs();
  return info;
}

const Rows<SamplerInfo>& sampler_catalog();
// A plugin's sampler, after the built-in ones (docs/plugins.md); a taken name throws UserError.
void register_sampler(SamplerInfo info);
// A Poisson sampler's inclusion probability: sampler.fraction, or clients_per_round / clients.
double poisson_rate(const Scenario& s);
// "8 clients per round", or for a Poisson sampler "each client with probability 0.5 (50 expected)".
std::string cohort_description(const Scenario& s);
std::vector<std::string> sampler_names();
// The catalogue row of `name`, or nullptr.
const SamplerInfo* find_sampler(const std::string& name);

// Whether the scenario's sampler draws each client independently (SamplingDesign::poisson).
bool draws_poisson(const Scenario& s);
// The samplers a run uses: sampler.name, then those the timeline switches to, in its order.
std::vector<std::string> used_sampler_names(const Scenario& s);

// Throws UserError, with the closest name, for a sampler not in the catalogue.
std::unique_ptr<Sampler> make_sampler(const std::string& name, const Scenario& scenario, const Population& population);

}  // namespace drift
