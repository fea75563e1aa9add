@0xd9796337d34dcd6d;
# Device pool <-> trainer slot: several clients of one round trained as one pack
# (devices.pack). The round's task travels beside it, encoded once for all of them.
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drift::wire");

struct PackJob {
  clients @0 :List(UInt32);  # in cohort order
}

struct PackedUpdate {
  client @0 :UInt32;
  update @1 :Data;   # an Update message (update.capnp); empty when training failed
  error @2 :Text;    # why it failed (a non-finite loss fails that client only)
}

struct PackResult {
  members @0 :List(PackedUpdate);  # in the job's order
}
