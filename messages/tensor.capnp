@0xdc2a324269bf0420;
# Tensors on the wire. Every model and every piece of algorithm knowledge travels as these.
using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drift::wire");

enum DType {
  float32 @0;
  float64 @1;
  int64 @2;
  int32 @3;
  uint8 @4;
}

struct Tensor {
  name @0 :Text;
  dtype @1 :DType;
  shape @2 :List(Int64);
  # Little-endian, row-major; exactly numel(shape) * sizeof(dtype) bytes. Data blobs are
  # word-aligned inside a message, which is what lets a reader alias them as tensors.
  data @3 :Data;
}

struct TensorBundle {
  tensors @0 :List(Tensor);
}
