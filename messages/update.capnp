@0xc498a0503ddfedcc;
# Client -> server: the result of one local training task.
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drift::wire");
using import "tensor.capnp".TensorBundle;
using import "payload.capnp".Payload;
using import "control.capnp".EvalResult;

enum UpdateKind {
  weights @0;   # the client's full model state after training
  delta @1;     # local minus received
}

struct TrainMetrics {
  loss @0 :Float64;        # mean training loss over all local steps
  accuracy @1 :Float64;    # training accuracy over all local steps
  steps @2 :UInt32;
  samplesSeen @3 :UInt64;
}

struct ClientUpdate {
  clientId @0 :UInt32;
  round @1 :UInt32;
  modelVersion @2 :UInt64;
  numSamples @3 :UInt64;
  kind @4 :UpdateKind;
  weights @5 :TensorBundle;
  payload @6 :Payload;
  metrics @7 :TrainMetrics;
  hasPersonal @8 :Bool;        # private models: the client's own model on its test split
  personal @9 :EvalResult;
}
