@0xa7c1c76538b62cda;
# Messages between the server, the sampler, the clients and the device pool.
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drift::wire");
using import "payload.capnp".Payload;

struct SelectionRequest {
  round @0 :UInt32;
}

struct Selection {
  round @0 :UInt32;
  clients @1 :List(UInt32);   # ascending client ids
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
}

struct EvalResult {
  begin @0 :UInt64;
  end @1 :UInt64;
  lossSum @2 :Float64;
  correct @3 :List(UInt64);   # per class
  count @4 :List(UInt64);     # per class
}
