@0xdcbe76704876f183;
# The join handshake between a coordinator and a worker (engine/cluster/join.hpp). Decoded
# before the peer is trusted, so every field is bounded by the decoder.
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drift::wire");

struct JoinRequest {
  protocol @0 :UInt32;
  driftVersion @1 :Text;
  torchVersion @2 :Text;
  token @3 :Text;
  worker @4 :Text;
  devices @5 :Text;
  expectedScenario @6 :Text;
}

struct JoinReply {
  accepted @0 :Bool;
  reason @1 :Text;
  session @2 :UInt64;
  scenarioToml @3 :Text;
  scenarioHash @4 :Text;
}

struct WorkerReady {
  session @0 :UInt64;
  scenarioHash @1 :Text;
  dataFingerprint @2 :Text;
  slots @3 :UInt32;
}
