#pragma once
#include "engine/sim/driver.hpp"

namespace drift {

std::unique_ptr<Driver> make_sync_driver(DriverSetup setup, JobRunner& runner, DriverListener& listener);
std::unique_ptr<Driver> make_async_driver(DriverSetup setup, JobRunner& runner, DriverListener& listener);

}  // namespace drift
