@0x9b5e3939cca08af0;
# The server's driver <-> an edge host (actors/edge_host): the questions only an edge's
# aggregator can answer, when edges live in another process ([hierarchy], docs/hierarchy.md).
# Models travel as TensorBundle messages and updates as ClientUpdate messages of their own.
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drift::wire");
using import "report.capnp".NamedValue;
using import "report.capnp".NamedSeries;

struct EdgeAssignment {
  edges @0 :List(UInt32);        # ascending: the edges this host keeps
}

struct EdgeAggregationInput {
  round @0 :UInt32;
  staleness @1 :List(UInt64);    # one per update, in the updates' order
  pulledVersion @2 :List(UInt64);
}

struct EdgeAggregated {
  moved @0 :Bool;                # false: nothing moved the edge's model
  scalars @1 :List(NamedValue);  # the server half's metrics
  perClient @2 :List(NamedSeries);
  shareClients @3 :List(UInt32); # each client's share of the step, ascending by client
  shareValues @4 :List(Float64);
}

struct EdgeRegroup {
  clients @0 :List(UInt32);      # ascending population ids
  previous @1 :List(UInt32);     # each one's place at the edge before ...
  joined @2 :List(Bool);         # ... unless it joined (then `previous` is 0)
}

struct EdgeState {
  edge @0 :UInt32;
  server @1 :Data;               # the server half's checkpoint part, as the driver writes it
  model @2 :Data;                # the edge's model's checkpoint part
}

struct EdgeStates {
  parts @0 :List(EdgeState);     # ascending by edge
}
