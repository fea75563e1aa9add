@0xa7c1c76538b62cda;
# Messages between the server, the sampler, the clients and the device pool.
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drift::wire");
using import "payload.capnp".Payload;

# Round driver (server) -> sampler: who may be chosen, and what changed since the last request.
struct ClientLoss {
  client @0 :UInt32;
  loss @1 :Float64;
}

struct TimelineStep {
  index @0 :UInt32;           # into the scenario's timeline
  time @1 :Float64;           # virtual seconds at which the driver applied it
}

struct SelectionRequest {
  round @0 :UInt32;           # sync round, or aggregation index + 1 (async)
  time @1 :Float64;           # virtual seconds
  slots @2 :UInt32;           # 0: a sync cohort; else up to this many clients, drawn one at a time
  overSelection @3 :Float64;  # sync: draw ceil(overSelection x the cohort size)
  busy @4 :List(UInt32);      # ascending: clients not idle at `time`
  losses @5 :List(ClientLoss);
  timeline @6 :List(TimelineStep);
  edge @7 :UInt32;            # [hierarchy]: 0 = the whole population; e + 1 = edge e's clients
}

# Sampler -> round driver.
struct Selection {
  round @0 :UInt32;
  clients @1 :List(UInt32);   # in the order drawn (ascending for a sync cohort)
  cohortSize @2 :UInt32;      # sync: the cohort before over-selection
  eligible @3 :UInt32;        # present and idle at the request's time
}

struct ClientState {
  # A client's private algorithm state (never sent to the server). Client -> device pool it
  # travels beside the round's TrainingTask buffer, which stays shared and is never re-encoded;
  # the trainer slot sends the updated state back beside the ClientUpdate.
  clientId @0 :UInt32;
  state @1 :Payload;
}

struct EvalJob {
  # Sent with a TensorBundle buffer holding the model to evaluate.
  modelVersion @0 :UInt64;
  begin @1 :UInt64;           # test-set range [begin, end)
  end @2 :UInt64;
  perSample @3 :Bool;         # also return whether each sample was classified right
}

struct EvalResult {
  begin @0 :UInt64;
  end @1 :UInt64;
  lossSum @2 :Float64;
  correct @3 :List(UInt64);   # per class
  count @4 :List(UInt64);     # per class
}

struct EvalReply {
  # What an evaluation job returns. The hits live here, not in EvalResult, which a private
  # model's update carries too: its size (and so its virtual upload time) stays as it was.
  result @0 :EvalResult;
  hits @1 :Data;              # perSample: one byte (0 or 1) per sample of [begin, end)
}
