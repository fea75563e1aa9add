@0xc498a0503ddfedcc;
# Client -> server: the result of one local training task.
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drift::wire");
using import "tensor.capnp".TensorBundle;
using import "payload.capnp".Payload;
using import "control.capnp".EvalResult;

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
  weights @4 :TensorBundle;   # the client's full model state after training
  payload @5 :Payload;
  metrics @6 :TrainMetrics;
  hasPersonal @7 :Bool;        # private models: the client's own model on its test split
  personal @8 :EvalResult;
}
