#include "catch_torch.hpp"

#include "engine/core/error.hpp"
#include "engine/training/devices.hpp"

using namespace drift;

TEST_CASE("device lists parse into devices and slot counts", "[devices]") {
  const auto d = parse_device_pool("cpu:2,cuda:0x4,cuda:1");
  REQUIRE(d.size() == 3);
  CHECK(d[0].device.is_cpu());
  CHECK(d[0].slots == 2);
  CHECK(d[1].name() == "cuda:0");
  CHECK(d[1].slots == 4);
  CHECK(d[2].name() == "cuda:1");
  CHECK(d[2].slots == 1);
  CHECK(parse_device_pool("cpu").front().slots >= 1);  // one per core
  CHECK(describe(d) == "cpu x2, cuda:0 x4, cuda:1 x1");
}

TEST_CASE("bad device lists are refused naming the entry", "[devices]") {
  CHECK_THROWS_WITH(parse_device_pool("cpu:0"), Catch::Contains("'0' is not a slot count"));
  CHECK_THROWS_WITH(parse_device_pool("cpu:2,"), Catch::Contains("empty entry"));
  CHECK_THROWS_WITH(parse_device_pool("gpu:0"), Catch::Contains("unknown device 'gpu:0'"));
  CHECK_THROWS_WITH(parse_device_pool("cuda:x2"), Catch::Contains("expected cuda:INDEX"));
  CHECK_THROWS_WITH(parse_device_pool("cuda:0x"), Catch::Contains("not a slot count"));
  CHECK_THROWS_WITH(parse_device_pool("cpu:1,cpu:2"), Catch::Contains("listed twice"));
}

TEST_CASE("a GPU this build cannot use is refused with the reason", "[devices]") {
  const auto gpu = parse_device_pool("cuda:0x2");
  if (cuda_available()) {
    CHECK_NOTHROW(require_devices(gpu));
    CHECK_THROWS_WITH(require_devices(parse_device_pool("cuda:255")), Catch::Contains("GPU(s) are visible"));
  } else {
    CHECK_THROWS_WITH(require_devices(gpu), Catch::Contains("LibTorch without CUDA"));
  }
  CHECK_NOTHROW(require_devices(parse_device_pool("cpu:3")));
}

TEST_CASE("jobs go to the least-loaded device with an idle slot", "[devices]") {
  std::vector<DeviceSlots> devices = {{torch::kCPU, 2}, {torch::Device(torch::kCUDA, 0), 4}};
  CHECK(least_loaded_device(devices, {0, 0}) == 0u);  // tie: the first listed
  CHECK(least_loaded_device(devices, {1, 0}) == 1u);  // 1/2 busy against 0/4
  CHECK(least_loaded_device(devices, {1, 2}) == 0u);  // 1/2 = 2/4: the first listed
  CHECK(least_loaded_device(devices, {1, 3}) == 0u);  // 1/2 < 3/4
  CHECK(least_loaded_device(devices, {2, 3}) == 1u);  // the CPU is full
  CHECK_FALSE(least_loaded_device(devices, {2, 4}).has_value());
}
