#include "catch_torch.hpp"
#include "scenario_error.hpp"

#include "engine/compose/loader.hpp"
#include "engine/config/suggest.hpp"
#include "engine/core/error.hpp"

using namespace drift;

namespace {

const char* kMinimal = R"(
seed = 4
[federation]
clients = 20
rounds = 5
[sampler]
clients_per_round = 8
)";

using test::error_of;

}  // namespace

TEST_CASE("a minimal scenario gets every default", "[scenario]") {
  const auto s = parse_scenario(kMinimal, "dir/minimal.toml");
  CHECK(s.name == "minimal");
  CHECK(s.seed == 4);
  CHECK(s.clients == 20);
  CHECK(s.rounds == 5);
  CHECK(s.sampler.cohort_size(20) == 8);
  CHECK(s.data.dataset == "fashion-mnist");
  CHECK(s.partition.scheme == "dirichlet");
  CHECK(s.partition.params.number("alpha") == 0.5);
  CHECK(s.model == "small-cnn");
  CHECK(s.algorithm == "fedavg");
  CHECK(s.training.batch_size == 64);
  CHECK(s.evaluation.targets == std::vector<double>{0.5, 0.7, 0.8});
  // The resolved file names every key, and loading it gives the same resolved file.
  for (const char* key :
       {"max_train_samples", "min_client_samples", "local_epochs", "chunk_size", "cpu_slots", "runs_dir"})
    CHECK_THAT(s.resolved_toml, Catch::Contains(key));
  CHECK_THAT(s.resolved_toml, Catch::Contains("targets = [ 0.5, 0.7, 0.8 ]"));
  const auto again = parse_scenario(s.resolved_toml, "dir/minimal.toml");
  CHECK(again.resolved_toml.substr(again.resolved_toml.find("\n\n")) ==
        s.resolved_toml.substr(s.resolved_toml.find("\n\n")));
}

TEST_CASE("fraction sets the cohort when clients_per_round is absent", "[scenario]") {
  auto s = parse_scenario("[federation]\nclients = 50\n[sampler]\nfraction = 0.25\n", "f.toml");
  CHECK(s.sampler.cohort_size(50) == 13);  // round(12.5) -> 13
  s = parse_scenario("[federation]\nclients = 50\n", "f.toml");
  CHECK(s.sampler.cohort_size(50) == 5);  // default fraction 0.1
  CHECK_THAT(s.resolved_toml, Catch::Contains("fraction = 0.1"));
}

TEST_CASE("algorithm parameters are validated against the algorithm", "[scenario]") {
  auto s = parse_scenario("[algorithm]\nname = \"fedprox\"\nmu = 0.5\n", "p.toml");
  CHECK(s.algorithm_params.number("mu") == 0.5);
  s = parse_scenario("[algorithm]\nname = \"fedprox\"\n", "p.toml");
  CHECK(s.algorithm_params.number("mu") == 0.01);
  CHECK_THAT(error_of("[algorithm]\nname = \"fedavg\"\nmu = 0.5\n"),
             Catch::Contains("unknown key 'algorithm.mu'") && Catch::Contains("takes no parameters"));
  CHECK_THAT(error_of("[algorithm]\nname = \"fedprox\"\nmuu = 0.5\n"), Catch::Contains("did you mean 'algorithm.mu'"));
  // Another algorithm's parameter: say whose it is, never "did you mean" the key itself.
  const auto other = error_of("[algorithm]\nname = \"fedavg\"\ntau = 0.07\n");
  CHECK_THAT(other, Catch::Contains("unknown key 'algorithm.tau' (a parameter of ") && Catch::Contains("fedccl") &&
                        Catch::Contains("takes no parameters"));
  CHECK_THAT(other, !Catch::Contains("did you mean"));
}

TEST_CASE("bad input names the place, the key and the fix", "[scenario]") {
  CHECK(error_of("[training]\nlrr = 0.1\n") == "s.toml:2:1: unknown key 'training.lrr' (did you mean 'training.lr'?)");
  CHECK_THAT(error_of("[trainng]\nlr = 0.1\n"),
             Catch::Contains("unknown key 'trainng'") && Catch::Contains("'training'"));
  CHECK_THAT(error_of("rounds = 3\n"), Catch::Contains("did you mean 'federation.rounds'"));
  CHECK(error_of("[training]\nlr = \"fast\"\n") == "s.toml:2:6: training.lr must be a number, not string");
  CHECK_THAT(error_of("[federation]\nrounds = 2.5\n"), Catch::Contains("federation.rounds must be an integer"));
  CHECK(error_of("[partition]\nalpha = 0\n") == "s.toml:2:9: partition.alpha must be > 0, got 0");
  CHECK_THAT(error_of("[partition]\nalpha = -1.5\n"), Catch::Contains("must be > 0, got -1.5"));
  CHECK(error_of("[sampler]\nfraction = 1.5\n") == "s.toml:2:12: sampler.fraction must be <= 1, got 1.5");
  CHECK(error_of("[federation]\nrounds = 0\n") == "s.toml:2:10: federation.rounds must be >= 1, got 0");
  CHECK_THAT(error_of("[algorithm]\nname = \"fedavgg\"\n"),
             Catch::StartsWith("s.toml:2:8: unknown algorithm 'fedavgg' (did you mean 'fedavg'?); choose one of: "
                               "fedavg, fedprox, ") &&
                 Catch::Contains(", scaffold"));
  CHECK_THAT(error_of("[data]\ndataset = \"fashion_mnist\"\n"),
             Catch::Contains("unknown dataset 'fashion_mnist' (did you mean 'fashion-mnist'?)"));
  CHECK_THAT(error_of("[sampler]\nclients_per_round = 3\nfraction = 0.5\n"), Catch::Contains("not both"));
  CHECK_THAT(error_of("[federation]\nclients = 4\n[sampler]\nclients_per_round = 5\n"),
             Catch::Contains("only 4 clients"));
  CHECK_THAT(error_of("training = 3\n"), Catch::Contains("must be a table"));
  CHECK_THAT(error_of("[federation\nrounds = 3\n"), Catch::StartsWith("s.toml:1:"));
}

TEST_CASE("overrides from --set replace keys with TOML values and is named in errors", "[scenario]") {
  const auto s = parse_scenario(kMinimal, "s.toml",
                                {{"federation.rounds", "9"},
                                 {"training.lr", "0.2"},
                                 {"model.name", "fedavg-cnn"},
                                 {"algorithm.name", "\"fedprox\""},
                                 {"evaluation.targets", "[0.6]"}});
  CHECK(s.rounds == 9);
  CHECK(s.training.learning_rate == 0.2);
  CHECK(s.model == "fedavg-cnn");
  CHECK(s.algorithm == "fedprox");
  CHECK(s.evaluation.targets == std::vector<double>{0.6});
  CHECK(error_of(kMinimal, {{"federation.rounds", "0"}}) ==
        "--set federation.rounds: federation.rounds must be >= 1, got 0");
  // Integers are written as they were given, and one past TOML's is no word.
  CHECK_THAT(error_of(kMinimal, {{"federation.rounds", "9223372036854775807"}}),
             Catch::Matchers::EndsWith("must be <= 1000000000, got 9223372036854775807"));
  CHECK_THAT(error_of(kMinimal, {{"federation.rounds", "18446744073709551616"}}),
             Catch::Contains("18446744073709551616: a whole number past TOML's integers"));
  CHECK_THAT(error_of(kMinimal, {{"federation.roundz", "3"}}), Catch::Contains("did you mean 'federation.rounds'"));
  CHECK(parse_override("a.b=c=d").value == "c=d");
  CHECK_THROWS_AS(parse_override("novalue"), UserError);
  // One number is a list of one: a one-channel dataset's normalisation, a single target.
  const auto one = parse_scenario(
      kMinimal, "s.toml", {{"data.augment.mean", "0.0"}, {"data.augment.std", "1"}, {"evaluation.targets", "0.7"}});
  CHECK(one.data.augment.mean == std::vector<double>{0.0});
  CHECK(one.data.augment.std == std::vector<double>{1.0});
  CHECK(one.evaluation.targets == std::vector<double>{0.7});
  // A value that opens as a TOML string but is none gets TOML's reason, not a bare word's.
  CHECK_THAT(error_of(kMinimal, {{"name", "\"a\\xffb\""}}), Catch::Contains("not a TOML value"));
  // An integer for a float key is that float: one resolved scenario (a study refuses two cells
  // that resolve alike).
  const auto as_integer = parse_scenario(kMinimal, "s.toml", {{"training.lr", "1"}, {"training.momentum", "0"}});
  const auto as_float = parse_scenario(kMinimal, "s.toml", {{"training.lr", "1.0"}, {"training.momentum", "0.0"}});
  CHECK(as_integer.resolved_toml == as_float.resolved_toml);
}

TEST_CASE("edit distance and suggestions", "[scenario]") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(closest_match("fedprx", {"fedavg", "fedprox"}) == "fedprox");
  CHECK(closest_match("completely-different", {"fedavg", "fedprox"}).empty());
}
