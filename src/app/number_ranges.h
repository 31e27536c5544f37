// Validators for the CLI's numeric options, so that a bad value is one short usage line (exit 2)
// naming the option, the value as given and the accepted range:
//   --steps: 99999999999999999999 is not an integer from 1 to 2^31-1
// CLI11's own range checks print their bounds in full (DBL_MAX: 309 digits) and its conversion
// errors do not say what is accepted. A value passes only in the plain form the option's type reads
// exactly: decimal digits with an optional '-' for integers; a finite decimal number for reals.
// Not thread-safe (CLI setup).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>

namespace websd::app {

// An integer from `min` to `max`; a bound that is a type's largest value prints as 2^31-1 or 2^63-1.
CLI::Validator integer_range(std::int64_t min, std::int64_t max);

// An integer that is a multiple of `factor` (after integer_range has checked its form and range).
CLI::Validator integer_multiple(std::int64_t factor);

// A finite number from `min` to `max` (infinite bounds: any finite number on that side).
CLI::Validator number_range(double min = -std::numeric_limits<double>::infinity(),
                            double max = std::numeric_limits<double>::infinity());

}  // namespace websd::app
