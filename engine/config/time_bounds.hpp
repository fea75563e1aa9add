#pragma once
// Bounds on every input that feeds virtual time (latencies, periods, deadlines, trace times,
// speeds and bandwidths). Within them, every time a run derives (a latency plus bytes over a
// bandwidth plus samples over a speed, summed over rounds) stays a finite double, so an absurd
// input is refused at validation rather than met as "time is not finite" in the middle of a
// run (docs/scenarios.md#bounds).
namespace drift {

constexpr double kMaxVirtualSeconds = 1e12;  // a time or duration: about 31,700 years
constexpr double kMinRate = 1e-6;            // samples or bytes per second
constexpr double kMaxRate = 1e15;

}  // namespace drift
