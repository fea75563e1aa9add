@0xe2692c53029025ab;
# Server -> client: what to train from and how.
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drift::wire");
using import "tensor.capnp".TensorBundle;
using import "payload.capnp".Payload;

struct HyperParams {
  learningRate @0 :Float64;
  momentum @1 :Float64;
  weightDecay @2 :Float64;
  localEpochs @3 :UInt32;
  batchSize @4 :UInt32;
  dropLast @5 :Bool;
  gradClip @6 :Float64;  # max global gradient norm per step; 0 = off
  localSteps @7 :UInt32;  # > 0: this many batches instead of localEpochs passes
  maxSteps @8 :UInt16;    # > 0: stop after this many steps (partial work); 16 bits fill a hole, so tasks keep their size
  persistentPass @9 :Bool;  # localSteps: the client's pass runs on across its jobs; a bit in a hole
}

struct TrainingTask {
  round @0 :UInt32;
  modelVersion @1 :UInt64;
  weights @2 :TensorBundle;
  payload @3 :Payload;
  hyper @4 :HyperParams;
}
