@0x9180dd12418dae82;
# The generic algorithm payload: whatever an algorithm sends besides the model weights
# (prototypes, control variates, knowledge vectors, histograms). New algorithms need no new schema.
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drift::wire");
using import "tensor.capnp".Tensor;

struct ClassVectors {
  # One named family of per-class vector lists, e.g. "prototypes": class id -> [n, d] rows.
  name @0 :Text;
  entries @1 :List(Entry);
  struct Entry {
    classId @0 :UInt32;
    vectors @1 :Tensor;
  }
}

struct Scalar {
  name @0 :Text;
  value @1 :Float64;
}

struct Payload {
  tensors @0 :List(Tensor);
  classVectors @1 :List(ClassVectors);
  scalars @2 :List(Scalar);
}
