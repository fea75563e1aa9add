#include <sched.h>

#include "catch_torch.hpp"

#include <thread>

#include "engine/core/error.hpp"
#include "engine/training/devices.hpp"
#include "engine/training/job_board.hpp"

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

TEST_CASE("a study's runs at once: the cores over the slots, and what the smallest GPU holds", "[devices]") {
  constexpr std::uint64_t GiB = 1ull << 30;
  const auto memory = [](int index) { return index == 0 ? 80 * GiB : index == 1 ? 40 * GiB : 0; };
  CHECK(runs_at_once(parse_device_pool("cpu:2"), 16, 0, memory) == 8);
  CHECK(runs_at_once(parse_device_pool("cpu:4"), 2, 0, memory) == 1);  // never none
  CHECK(runs_at_once(parse_device_pool("cuda:0"), 16, 0, memory) == 16);
  CHECK(runs_at_once(parse_device_pool("cuda:0"), 16, 30 * GiB, memory) == 2);           // 80 / 30
  CHECK(runs_at_once(parse_device_pool("cuda:0x2,cuda:1"), 16, 10 * GiB, memory) == 4);  // 40 / 10, 16 / 3 = 5
  CHECK(runs_at_once(parse_device_pool("cuda:0x2,cuda:1"), 12, 10 * GiB, memory) == 4);  // 12 / 3
  CHECK(runs_at_once(parse_device_pool("cuda:0x2,cuda:1"), 9, 10 * GiB, memory) == 3);   // 9 / 3
  CHECK(runs_at_once(parse_device_pool("cuda:2"), 16, 10 * GiB, memory) == 16);          // memory unknown: cores only
  CHECK(runs_at_once(parse_device_pool("cuda:1"), 16, 50 * GiB, memory) == 1);           // more than it holds: one
}

TEST_CASE("job board: the least loaded device's lowest idle slot, in queue order", "[devices][job_board]") {
  JobBoard<int> board;
  board.add_device("cpu", DeviceSlots{torch::kCPU, 2}, false);        // slots 0, 1
  board.add_device("worker 'a'", DeviceSlots{torch::kCPU, 1}, true);  // slot 2
  for (int job = 10; job < 14; ++job) board.submit(job);
  std::vector<std::pair<int, std::size_t>> placed;
  while (auto s = board.start_next(0.0)) placed.emplace_back(s->job, s->slot);
  // cpu 0/2 vs worker 0/1 -> cpu; cpu 1/2 vs 0/1 -> worker; then cpu's second slot; none idle.
  CHECK(placed == std::vector<std::pair<int, std::size_t>>{{10, 0}, {11, 2}, {12, 1}});
  CHECK(board.queued() == 1);
  CHECK(board.live_workers() == 1);
  CHECK(board.live_slots() == 3);
  CHECK(board.finish(1, 2.0) == 11);  // the worker's job: its slot is idle again
  CHECK_FALSE(board.finish(1, 2.0).has_value());
  const auto next = board.start_next(3.0);
  REQUIRE(next.has_value());
  CHECK(next->job == 13);
  CHECK(next->slot == 2);
}

namespace {

// The next job the board starts and its slot; (0, 9) when none starts.
std::pair<int, std::size_t> start_next(JobBoard<int>& board, double now) {
  const auto s = board.start_next(now);
  return s ? std::make_pair(s->job, s->slot) : std::make_pair(0, std::size_t{9});
}

}  // namespace

TEST_CASE("job board: a busy local slot takes one job ahead while more jobs wait than slots", "[devices][job_board]") {
  JobBoard<int> board;
  board.add_device("cpu", DeviceSlots{torch::kCPU, 1}, false);        // slot 0
  board.add_device("worker 'a'", DeviceSlots{torch::kCPU, 1}, true);  // slot 1
  for (int job = 1; job <= 7; ++job) board.submit(job);
  const auto next = [&](double now) { return start_next(board, now); };
  // Both slots busy, then 5 jobs wait for 2 slots: the local slot takes job 3 ahead; the worker
  // never does, and a slot holds one job ahead at most.
  CHECK(next(0.0) == std::make_pair(1, std::size_t{0}));
  CHECK(next(0.0) == std::make_pair(2, std::size_t{1}));
  CHECK(next(0.0) == std::make_pair(3, std::size_t{0}));
  CHECK(next(0.0).first == 0);
  CHECK(board.finish(0, 1.0) == 1);  // slot 0 goes on with job 3 and takes job 4 ahead
  CHECK(next(1.0) == std::make_pair(4, std::size_t{0}));
  CHECK(next(1.0).first == 0);
  CHECK(board.finish(1, 2.0) == 2);  // the worker's slot is idle: job 5 goes there
  CHECK(next(2.0) == std::make_pair(5, std::size_t{1}));
  // Two jobs wait for two slots: the end of the run, where no job queues behind another.
  CHECK(board.finish(2, 3.0) == 3);
  CHECK(next(3.0).first == 0);
  CHECK(board.queued() == 2);
  CHECK(board.finish(3, 4.0) == 4);  // slot 0 is idle now
  CHECK(next(4.0) == std::make_pair(6, std::size_t{0}));
  CHECK(board.finish(5, 5.0) == 6);
  CHECK(next(5.0) == std::make_pair(7, std::size_t{0}));
}

TEST_CASE("job board: workers the run started hold a job ahead too", "[devices][job_board]") {
  JobBoard<int> board;
  board.hold_ahead_at_workers(true);                                                           // --slot-processes
  board.add_device("worker 'slot-1'", DeviceSlots{torch::kCPU, 1}, true);                      // slot 0
  const auto worker = board.add_device("worker 'slot-2'", DeviceSlots{torch::kCPU, 1}, true);  // slot 1
  for (int job = 1; job <= 6; ++job) board.submit(job);
  const auto next = [&](double now) { return start_next(board, now); };
  CHECK(next(0.0) == std::make_pair(1, std::size_t{0}));
  CHECK(next(0.0) == std::make_pair(2, std::size_t{1}));
  CHECK(next(0.0) == std::make_pair(3, std::size_t{0}));  // ahead at slot-1
  CHECK(next(0.0) == std::make_pair(4, std::size_t{1}));  // ahead at slot-2
  CHECK(next(0.0).first == 0);                            // one ahead per slot at most
  CHECK(board.finish(0, 1.0) == 1);                       // slot-1 goes on with 3; 2 wait for 2 slots
  CHECK(next(1.0).first == 0);
  // Retired, slot-2 gives back the job it runs and the one it holds, in the order they started.
  CHECK(board.retire(worker) == std::vector<int>{2, 4});
  CHECK(board.finish(2, 1.5) == 3);
  CHECK(next(1.5) == std::make_pair(5, std::size_t{0}));
}

TEST_CASE("job board: a worker's deadline follows its mean job, never before its first", "[devices][job_board]") {
  JobBoard<int> board;
  const auto worker = board.add_device("worker 'a'", DeviceSlots{torch::kCPU, 1}, true);
  const JobDeadline rule{10, 5};
  board.submit(1);
  board.submit(2);
  board.start_next(0.0);
  CHECK_FALSE(board.overdue(worker, 1000.0, rule).has_value());  // no finished job yet
  board.finish(0, 0.25);                                         // mean 0.25 s: the 5 s floor rules
  board.start_next(1.0);
  CHECK_FALSE(board.overdue(worker, 5.9, rule).has_value());
  const auto late = board.overdue(worker, 6.5, rule);
  REQUIRE(late.has_value());
  CHECK(*late == "a job ran 5.5 s, past its deadline of 5 s (10 s x its mean job of 0.25 s)");
  board.finish(1, 2.25);  // mean (0.25 + 1.25) / 2 = 0.75: deadline 7.5 s
  board.submit(3);
  board.start_next(10.0);
  CHECK_FALSE(board.overdue(worker, 17.0, rule).has_value());
  CHECK(board.overdue(worker, 17.6, rule).has_value());
}

TEST_CASE("job board: a retired device gives its running jobs back, in order, and they run first",
          "[devices][job_board]") {
  JobBoard<int> board;
  const auto cpu = board.add_device("cpu", DeviceSlots{torch::kCPU, 1}, false);
  const auto worker = board.add_device("worker 'a'", DeviceSlots{torch::kCPU, 2}, true);
  for (int job = 1; job <= 4; ++job) board.submit(job);
  while (board.start_next(0.0)) {
  }
  // cpu took 1 (slot 0), the worker 2 and 3; 4 waits.
  auto back = board.retire(worker);
  CHECK(back == std::vector<int>{2, 3});
  CHECK_FALSE(board.live(worker));
  CHECK(board.live_workers() == 0);
  CHECK(board.live_slots() == 1);
  CHECK_FALSE(board.finish(1, 1.0).has_value());  // a late answer of the let-go worker
  board.requeue_first(std::move(back));
  CHECK(board.finish(0, 1.0) == 1);
  std::vector<int> order;
  while (true) {
    const auto s = board.start_next(1.0);
    if (!s) break;
    order.push_back(s->job);
    board.finish(s->id, 2.0);
  }
  CHECK(order == std::vector<int>{2, 3, 4});
  CHECK(board.live(cpu));
  board.let_go(cpu);  // released: nothing new starts there
  board.submit(5);
  CHECK_FALSE(board.start_next(3.0).has_value());
  CHECK(board.take_queued() == std::vector<int>{5});
}

TEST_CASE("job board: evaluation lanes run only lane jobs, and lane jobs only there", "[devices][job_board]") {
  const auto pool = parse_device_pool("cpu:2,cuda:0x4,cuda:1");
  CHECK(eval_lane_devices(pool, EvalLanes::gpus) == std::vector<torch::Device>{pool[1].device, pool[2].device});
  CHECK(eval_lane_devices(pool, EvalLanes::all).size() == 3);
  CHECK(eval_lane_devices(pool, EvalLanes::none).empty());
  JobBoard<int> board;
  board.add_device("cpu", DeviceSlots{torch::kCPU, 1}, false);  // slot 0
  board.submit(1, true);                                        // no lane yet: a slot's job like any
  CHECK(start_next(board, 0.0) == std::make_pair(1, std::size_t{0}));
  CHECK(board.add_lane() == 1);
  CHECK(board.lanes() == 1);
  CHECK(board.live_slots() == 1);  // a lane is no training slot
  board.submit(2);
  board.submit(3, true);
  board.submit(4, true);
  CHECK(board.queued() == 3);
  // The lane takes the first lane job at once, although the training slot is busy and a
  // training job waited before it; the second lane job waits for the lane, not for slot 0.
  CHECK(start_next(board, 0.0) == std::make_pair(3, std::size_t{1}));
  CHECK(start_next(board, 0.0) == std::make_pair(0, std::size_t{9}));
  CHECK(board.finish(0, 1.0) == 1);
  CHECK(start_next(board, 1.0) == std::make_pair(2, std::size_t{0}));
  CHECK(start_next(board, 1.0) == std::make_pair(0, std::size_t{9}));  // 4 waits for the lane
  CHECK(board.finish(1, 1.5) == 3);
  CHECK(start_next(board, 1.5) == std::make_pair(4, std::size_t{1}));
  // A device's retirement leaves the lane's job running.
  CHECK(board.retire(0) == std::vector<int>{2});
  CHECK(board.finish(3, 2.0) == 4);
  board.submit(5, true);
  board.submit(6);
  CHECK(board.take_queued() == std::vector<int>{5, 6});
}

TEST_CASE("one slot per core counts the cores this process may run on", "[devices]") {
  CHECK(usable_cores() >= 1);
  std::uint32_t cores = 0, slots = 0;
  // A thread bound to one core (as taskset or a Slurm cpuset binds a process) sees one.
  std::thread bound([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0) return;
    cores = usable_cores();
    slots = parse_device_pool("cpu").front().slots;
  });
  bound.join();
  CHECK(cores == 1);
  CHECK(slots == 1);
}
