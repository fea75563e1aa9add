@0xb92a76c0d1734d49;
# Server -> metrics sink: one record per aggregation.
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drift::wire");

enum ClientEvent {
  eligible @0;
  selected @1;
  finished @2;
  late @3;
  stale @4;
  dropped @5;
  failed @6;
}

struct ClientRecord {
  clientId @0 :UInt32;
  event @1 :ClientEvent;
  numSamples @2 :UInt64;
  trainLoss @3 :Float64;
  bytesDown @4 :UInt64;
  bytesUp @5 :UInt64;
  detail @6 :Text;            # why a job failed
  time @7 :Float64;           # virtual seconds
  staleness @8 :UInt64;
  steps @9 :UInt32;           # local steps the update took
}

struct RoundReport {
  round @0 :UInt32;
  modelVersion @1 :UInt64;
  cohort @2 :List(UInt32);
  numUpdates @3 :UInt32;
  samples @4 :UInt64;
  trainLoss @5 :Float64;
  trainAccuracy @6 :Float64;
  evaluated @7 :Bool;
  testAccuracy @8 :Float64;
  testLoss @9 :Float64;
  perClassAccuracy @10 :List(Float64);
  bytesDown @11 :UInt64;
  bytesUp @12 :UInt64;
  clients @13 :List(ClientRecord);
  # Wall-clock figures: written to timings.jsonl only, never to metrics.jsonl.
  wallTrainSeconds @14 :Float64;
  wallEvalSeconds @15 :Float64;
  totalRounds @16 :UInt32;
  timeStart @17 :Float64;
  timeEnd @18 :Float64;
  eligible @19 :Int64;
  aggregated @20 :List(UInt32);
  finished @21 :UInt32;
  late @22 :UInt32;
  dropped @23 :UInt32;
  failed @24 :UInt32;
  staleness @25 :List(UInt64);
  discardedSamples @26 :UInt64;
  wastedComputeSeconds @27 :Float64;
  cohortTv @28 :Float64;
  cohortJs @29 :Float64;
  windowTv @30 :Float64;
  windowJs @31 :Float64;
  coverage @32 :Float64;
  clientAccuracy @33 :List(Float64);  # private models: by client id, NaN = not trained yet
  clientsEvaluated @34 :UInt32;
  domainAccuracy @35 :List(Float64);  # multi-domain datasets: by domain
  algorithmScalars @36 :List(NamedValue);     # the server half's named values (metrics.jsonl "algorithm")
  algorithmPerClient @37 :List(NamedSeries);  # ... and per aggregated client, by client id
  online @38 :Int64;          # registered and online at the round's start; -1 = not counted
  changeTv @39 :Float64;      # distance of the cohort's label distribution from the previous one's
  changeJs @40 :Float64;
  divergence @41 :Text;       # why this aggregation counts as diverged; empty if it does not
  updateDrift @42 :Float64;   # shadow clients: cohort vs population update, relative L2
  updateCosine @43 :Float64;
  shadowClients @44 :UInt32;
  shadowSamples @45 :UInt64;
  participationBias @46 :Float64;         # window shares vs n_i / n, total variation
  participationBiasUniform @47 :Float64;  # ... vs 1 / N
  dp @48 :Bool;                           # [privacy] is on: the dp* fields mean something
  dpClipped @49 :UInt32;
  dpNoiseStd @50 :Float64;
  dpEpsilon @51 :Float64;
  dpEpsilonAmplified @52 :Float64;
  dpEpsilonMaxClient @53 :Float64;
  dpClip @54 :Float64;
  sa @55 :Bool;                           # [secure_aggregation] is on: the sa* fields mean something
  saSurvivors @56 :List(UInt32);          # |U1| .. |U5| as far as the protocol got
  saThreshold @57 :UInt32;
  saShares @58 :UInt32;
  saAborted @59 :Bool;
  saAbortStage @60 :Text;
  saAbortReason @61 :Text;
  saSeconds @62 :Float64;
  saExtraSeconds @63 :Float64;
  saBytesUp @64 :UInt64;
  saBytesDown @65 :UInt64;
  saOverflows @66 :UInt64;
  saClippedCoords @67 :UInt64;
  saQuantizationMse @68 :Float64;
  partial @69 :Int64;                # simulation.partial_work: aggregated updates cut short; -1: off
  updateSteps @70 :List(UInt32);     # simulation.partial_work: each aggregated update's steps, ascending
  clientParticipations @71 :List(UInt32);  # evaluation.per_client: aggregations each client took part in so far
  clientSummary @72 :Bool;                 # evaluation.per_client: the five figures below were measured
  clientAccuracyMean @73 :Float64;
  clientAccuracyWeighted @74 :Float64;
  clientAccuracyP10 @75 :Float64;
  clientAccuracyWorst @76 :Float64;
  clientParticipationCorrelation @77 :Float64;
  clientAccuracyHeldOut @78 :Float64;      # federation.held_out: the held-out clients' mean accuracy
  heldOutClients @79 :List(UInt32);
  edgesSampled @80 :List(UInt32);    # [hierarchy]: this cloud round's edges, by fate
  edgesReported @81 :List(UInt32);
  edgesIdle @82 :List(UInt32);
  edgesLate @83 :List(UInt32);
  edgesLost @84 :List(UInt32);
  edgeUpdates @85 :List(UInt32);     # per edge id
  edgeWeight @86 :List(Float64);
  edgeArrival @87 :List(Float64);
  edgeCohortTv @88 :List(Float64);
  edgeBytesUp @89 :UInt64;
  edgeBytesDown @90 :UInt64;
  edgeReportedTv @91 :Float64;       # the reporting edges' clients against the population (TV)
  edgeParticipationBias @92 :Float64;  # the edges' cloud weights over the window against their sample shares
  edgeRoundsRun @93 :List(UInt32);     # per edge id: edge rounds run this cloud round
  edgeBusySeconds @94 :List(Float64);  # ... and seconds from its model's arrival to its last round's end
  edgeStaleness @95 :List(Float64);    # hierarchy.cloud = fedbuff: cloud steps since its model was pulled
  edgeClients @96 :List(UInt32);       # with timeline moves: per edge id, its clients this cloud round
  edgeAlgorithm @97 :List(NamedSeries);  # the edges' server halves' named values, per edge id
}

struct NamedValue {
  name @0 :Text;
  value @1 :Float64;
}

struct NamedSeries {
  name @0 :Text;
  values @1 :List(Float64);
}
